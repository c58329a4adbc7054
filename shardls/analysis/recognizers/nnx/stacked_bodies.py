"""The bodies of functions that `nnx.vmap`/`nnx.scan` transform run with their layers stacked
(reference §4.7): a body-contexts provider gives each call of such a function the stacking its
arguments imply, which the sites then read from the context (`stacking.stacked`).

Registered at import (`recognizers.load`), at its own rank among the providers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace

from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.library.nnx import VmapV, stacked_context
from shardls.analysis.recognizers.wrapped import Application, call_sites
from shardls.analysis.reuse import reuse_of
from shardls.analysis.sharded.nnx_vmapped import NNX_VMAP_API, Vmap, body_locals, decorator_vmap, of_nnx
from shardls.analysis.values import FunctionV, Value, options
from shardls.analysis.walker import (
    UNKNOWN_CALLER,
    Context,
    Visit,
    Walker,
    body_contexts,
    first_arguments,
)
from shardls.analysis.walking.caller_contexts import caller_contexts

_STACKING = ("vmap", "scan")
"""The transforms whose function's layers gain a leading axis (reference §4.7; scan stacks the
same way when it creates layers)."""


@body_contexts(rank=1)  # nnx.vmap/nnx.scan stacking
def _vmapped_body(
    walker: Walker, info: FunctionInfo, frame: Frame, context: Context, depth: int
) -> list[tuple[dict[str, Value], Context]]:
    """A function decorated with `nnx.vmap`/`nnx.scan` (or wrapped as `nnx.vmap(f, ...)(args)`)
    runs with its layers stacked: its calls' contexts gain the stacking their arguments imply.
    Under a vmap (`jax.vmap`'s decorators too) its typed array parameters are one element each
    (sharded/nnx_vmapped.py).

    Such functions are often defined inside `__init__` (the flax guide's `create_block`), so the
    enclosing call's arguments they read (`dim`) are passed on as well."""
    found: list[tuple[dict[str, Value], Context]] = []
    vmap = decorator_vmap(walker.evaluator, info, frame)
    if vmap is not None:
        sites = call_sites(walker, _decorated(info, frame, context), depth)
        found += [
            _run(
                walker.evaluator,
                info,
                frame,
                vmap,
                site.args,
                site.kwargs,
                replace(site.visit.context, call_site=site.where),
            )
            for site in sites
        ] or [_run(walker.evaluator, info, frame, vmap, [], {}, UNKNOWN_CALLER)]
    elif any(d.rsplit(".", 1)[-1] in _STACKING for d in info.decorators):
        plain = caller_contexts(walker, info, depth) or [({}, UNKNOWN_CALLER)]
        for locals_, caller in plain:
            stacked = stacked_context(walker.evaluator, info, frame, locals_, caller.stacked)
            found.append((locals_, replace(caller, stacked=stacked)))
    for transform in _STACKING:
        if info.name in first_arguments(walker.module, transform):
            found += _wrapped_calls(walker, transform, info, frame, depth)
    closure = {name: value for name, value in frame.locals.items() if name not in info.scope.final}
    return [({**closure, **locals_}, caller) for locals_, caller in found]


def _run(
    evaluator: Evaluator,
    info: FunctionInfo,
    defined: Frame,
    vmap: Vmap | None,
    args: list[Value],
    kwargs: dict[str, Value],
    caller: Context,
    wrapper: Value | None = None,
) -> tuple[dict[str, Value], Context]:
    """The body's parameters and context at one call of the transformed function."""
    locals_ = evaluator.bind_arguments(info, args, kwargs, None, defined)
    stacked = stacked_context(evaluator, info, defined, locals_, caller.stacked, wrapper)
    body = body_locals(evaluator, info, vmap, args, kwargs, locals_) if vmap is not None else locals_
    return body, replace(caller, stacked=stacked)


def _decorated(info: FunctionInfo, defined: Frame, context: Context) -> Application:
    """The vmap decorating `info` as an application, so that its calls are found as those of a
    wrapped function (`call_sites`)."""
    decorator = info.node.decorator_list[0]
    call = (
        decorator
        if isinstance(decorator, ast.Call)
        else ast.copy_location(ast.Call(decorator, [], []), decorator)
    )
    return Application(
        NNX_VMAP_API, Visit(call, defined, context, info.node, None), {}, {}, FunctionV(info), info.node
    )


def _wrapped_calls(
    walker: Walker, transform: str, info: FunctionInfo, defined: Frame, depth: int
) -> Iterator[tuple[dict[str, Value], Context]]:
    evaluator = walker.evaluator
    for visit, wrapper, function in _wrapping(walker, transform, info.name, depth):
        if not any(getattr(getattr(o, "func", None), "node", None) is info.node for o in options(function)):
            continue
        where = f"nnx.{transform}({info.name}, ...) at line {visit.frame.line_of(visit.call) + 1}"
        vmap = of_nnx(wrapper) if isinstance(wrapper, VmapV) else None
        caller = replace(visit.context, call_site=where)
        for args, kwargs in _arguments(walker, visit, info, depth, vmap is not None):
            yield _run(evaluator, info, defined, vmap, args, kwargs, caller, wrapper)


def _wrapping(walker: Walker, transform: str, name: str, depth: int) -> list[tuple[Visit, Value, Value]]:
    """The calls `transform(name, ...)` of the module, each with its value and that of `name`
    there. Found once per analysis (`analysis/reuse.py`), not once per function of that name:
    a test file defines `f` in hundreds of tests, and each evaluated every `nnx.vmap(f, ...)`."""
    evaluator = walker.evaluator

    def find() -> list[tuple[Visit, Value, Value]]:
        found = []
        for visit in walker.calls_named(transform, depth):
            wrapped = visit.call.args[0] if visit.call.args else None
            if isinstance(wrapped, ast.Name) and wrapped.id == name:
                wrapper = evaluator.evaluate(visit.call, visit.frame)
                found.append((visit, wrapper, evaluator.evaluate(wrapped, visit.frame)))
        return found

    key = ("wrapping", id(walker.module), transform, name, depth)
    return reuse_of(evaluator).answer(key, (walker.module,), find)


def _arguments(
    walker: Walker, visit: Visit, info: FunctionInfo, depth: int, vmap: bool
) -> list[tuple[list[Value], dict[str, Value]]]:
    """The arguments the transformed function is called with: at the transform's own call
    (`nnx.scan(f, ...)(x)`), or for an `nnx.vmap` wherever its result is called, as for
    `jax.vmap` (`nnx.vmap(f)(x)`, `g(x)` after `g = nnx.vmap(f)`, `jax.jit(nnx.vmap(f))(x)`);
    no argument when none is visible (the layers it creates are still stacked)."""
    if vmap:
        application = Application(NNX_VMAP_API, visit, {}, {}, FunctionV(info), None)
        found = [(site.args, site.kwargs) for site in call_sites(walker, application, depth)]
        return found or [([], {})]
    outer = next(
        (n for n in ast.walk(visit.statement) if isinstance(n, ast.Call) and n.func is visit.call), None
    )
    return [walker.evaluator.call_arguments(outer, visit.frame) if outer is not None else ([], {})]
