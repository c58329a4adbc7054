"""Calls of a function jitted with shardings in another module of the workspace.

`step = jax.jit(train_step, in_shardings=..., out_shardings=...)` (or `@partial(jax.jit,
in_shardings=...)` on a `def`) in `train_lib.py`, imported and called in `main.py`: the jit
recognizer finds the calls of a jitted function in its own module only, so the layouts JAX gives
the arguments and results of `main.py`'s call were shown nowhere. Here the jit application is
read back where it is written (its arguments evaluated in its own module, as there) and its
in/out layouts are placed on the call, with the caller's arrays and mesh context, as the same
call would get them in the jit's own file; the sites name the jitted function (`via step() in
train_lib.py:12`), so a problem found there is at most a warning, as through any helper.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.recognition import recognized
from shardls.analysis.recognizers.wrapped import Application, application_of
from shardls.analysis.values import BoundMethod, FunctionV, TransformedV, Value
from shardls.analysis.walker import Visit
from shardls.analysis.walking.call_syntax import last_name

JIT_NAMES = ("jit", "pjit")
"""The last names of the wrappers whose shardings a call of the result meets."""

SHARDING_KEYWORDS = frozenset(("in_shardings", "out_shardings"))


@dataclass(frozen=True)
class Jitted:
    """A function jitted with shardings, where the application is written."""

    app: Application
    name: str
    """What the jitted function is called by in its module (`step`, the decorated `def`)."""
    module: ModuleInfo
    line: int
    """The application's line (0-based), for the note naming it."""


def jitted_in_another_module(
    evaluator: Evaluator, option: Value, visit: Visit, here: ModuleInfo
) -> Jitted | None:
    """The jit application `option` (a value `visit` calls) is the result of, when it is written
    with shardings in another module than `here`."""
    written = _written(option)
    if written is None:
        return None
    call, module, frame, statement, name = written
    if module.path == here.path:
        return None
    where = Visit(call, frame, visit.context, statement, name)
    for _, qualname in recognized([where], evaluator):
        args, kwargs = evaluator.call_arguments(call, frame)
        app = application_of(evaluator, where, qualname, args, kwargs)
        if app is not None and app.api == "jax.jit" and not SHARDING_KEYWORDS.isdisjoint(app.arguments):
            return Jitted(app, name, module, frame.segment.abs_line(call.lineno))
    return None


def _written(option: Value) -> tuple[ast.Call, ModuleInfo, Frame, ast.stmt, str] | None:
    """The wrapper call, its module, the frame and statement it runs in, and the name bound."""
    if isinstance(option, BoundMethod) and option.name == "__call__":
        option = option.base  # `jax.jit(f, ...)` is called through its `__call__`
    if isinstance(option, TransformedV) and isinstance(option.func, FunctionV):
        module = option.func.func.module
        scope = module.scope
        for bindings in scope.bindings.values():
            for binding in bindings:
                if binding.value is option.node and isinstance(binding.node, ast.stmt):
                    frame = Frame(module, scope, binding.segment, binding.order)
                    return option.node, module, frame, binding.node, binding.name
        return None
    if isinstance(option, FunctionV) and option.bound is None and option.func.owner is None:
        info = option.func
        decorator = next((d for d in info.node.decorator_list if jit_decorator(d)), None)
        if decorator is None or not isinstance(decorator, ast.Call):
            return None
        frame = Frame(info.module, info.parent, info.segment, info.parent.order_of.get(id(info.node)))
        return decorator, info.module, frame, info.node, info.name
    return None


def jit_call(node: ast.expr | None) -> bool:
    """Whether `node` is written as a jit application with shardings (`jax.jit(f,
    in_shardings=...)`, `pjit(f, ...)`): read from the syntax, before anything is evaluated."""
    return isinstance(node, ast.Call) and last_name(node.func) in JIT_NAMES and _with_shardings(node)


def jit_decorator(node: ast.expr) -> bool:
    """Whether a decorator applies jit with shardings (`@partial(jax.jit, in_shardings=...)`)."""
    if not isinstance(node, ast.Call):
        return False
    if last_name(node.func) == "partial" and node.args:
        return last_name(node.args[0]) in JIT_NAMES and _with_shardings(node)
    return jit_call(node)


def _with_shardings(call: ast.Call) -> bool:
    return any(k.arg in SHARDING_KEYWORDS for k in call.keywords)
