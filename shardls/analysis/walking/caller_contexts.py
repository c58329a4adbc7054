"""The contexts a function's body runs in when its callers are visible in its module: one per
call that calls it, with its parameters bound to that call's arguments and the caller's mesh
and rule contexts.

Apart from the walker, which finds the calls (`Walker.calls_named`), because deciding what each
call calls and binding its arguments is a question about the calls once found, not about how
statements are walked."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from shardls.analysis.definitions import ClassInfo, FunctionInfo
from shardls.analysis.reuse import frame_key, reuse_of
from shardls.analysis.values import ClassV, FunctionV, InstanceV, Value, options
from shardls.analysis.walking.contexts import Context, Visit

if TYPE_CHECKING:
    from shardls.analysis.walker import Walker

MAX_CONTEXTS = 4
"""Contexts a function's body is walked in at most (the first calls found, in the walk's order)."""

_CONSTRUCTORS = ("__init__", "setup", "__post_init__")
"""Methods whose callers are the calls of their class."""


def caller_contexts(walker: Walker, info: FunctionInfo, depth: int) -> list[tuple[dict[str, Value], Context]]:
    """Argument bindings and caller contexts from the calls visible in the walker's module."""
    owner = info.owner
    if owner is not None and info.name not in _CONSTRUCTORS:
        return []
    callee_name = owner.name if owner is not None else info.name
    defined = owner.node if owner is not None else info.node
    found: list[tuple[dict[str, Value], Context]] = []
    for visit in _calls_of(walker, callee_name, depth).get(defined, ()):
        locals_ = _bound_by(walker, info, visit)
        if locals_ is None:
            continue
        where = f"{callee_name}(...) at line {visit.frame.line_of(visit.call) + 1}"
        found.append((locals_, replace(visit.context, call_site=where, runs_at=visit.frame.callee_runs_at())))
        if len(found) >= MAX_CONTEXTS:
            break
    return found


def _calls_of(walker: Walker, name: str, depth: int) -> dict[ast.AST, list[Visit]]:
    """`calls_named(name, depth)` by the definition (class or function node) each call may
    call, in the order of the walk. What a call calls is evaluated once, not once per
    function of that name: each of a test file's many `class Foo` evaluated every `Foo(...)`
    of the file (33,600 times in flax's `tests/nnx/transforms_test.py`)."""

    def index() -> dict[ast.AST, list[Visit]]:
        found: dict[ast.AST, list[Visit]] = {}
        for visit in walker.calls_named(name, depth):
            func = walker.evaluator.evaluate(visit.call.func, visit.frame)
            nodes = [
                o.cls.node if isinstance(o, ClassV) else o.func.node
                for o in options(func)
                if isinstance(o, (ClassV, FunctionV))
            ]
            for node in dict.fromkeys(nodes):
                found.setdefault(node, []).append(visit)
        return found

    key = ("calls of", id(walker.module), name, depth)
    return reuse_of(walker.evaluator).answer(key, (walker.module,), index)


def _bound_by(walker: Walker, info: FunctionInfo, visit: Visit) -> dict[str, Value] | None:
    """The function's parameters as a call binds them (None: the call calls something else).
    Found once per call and frame (`analysis/reuse.py`): the same caller is visited by the
    searches of every depth, and the same bindings then let what they compute be memoised."""
    evaluator = walker.evaluator

    def bind() -> dict[str, Value] | None:
        owner = info.owner
        func = evaluator.evaluate(visit.call.func, visit.frame)
        if not any(_is_same(option, info, owner) for option in options(func)):
            return None
        args, kwargs = evaluator.call_arguments(visit.call, visit.frame)
        # A constructor call passes no `self`: the first argument binds the second parameter.
        receiver = InstanceV(owner, (), visit.call) if owner is not None else None
        locals_ = evaluator.bind_arguments(info, args, kwargs, receiver, visit.frame)
        if owner is not None and info.params:
            self_name = info.params[0].arg
            locals_.pop(self_name, None)
            locals_[self_name] = InstanceV(owner, tuple(locals_.items()), visit.call)
        return locals_

    key = ("bound", id(info.node), id(visit.call), frame_key(visit.frame))
    return reuse_of(evaluator).answer(key, (info, visit.call, visit.frame), bind)


def _is_same(value: Value, info: FunctionInfo, owner: ClassInfo | None) -> bool:
    if owner is not None:
        return isinstance(value, ClassV) and value.cls.node is owner.node
    return isinstance(value, FunctionV) and value.func.node is info.node
