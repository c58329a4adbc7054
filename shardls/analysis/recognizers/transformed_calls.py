"""Functions reached only through `jax.grad(f)(x)`, `jax.value_and_grad(f)`, `jax.checkpoint(f)`.

These transforms call `f` with the arguments their result is called with, unchanged, so the body
of a loss function runs with the arrays of `jax.grad(loss)(params, batch)` (or of
`grad_fn(params, batch)` after `grad_fn = jax.value_and_grad(loss)`): its sites get the caller's
shapes and meshes instead of none. The body is traced (as under `jit`), but it is not inside
`jit` unless its caller is: JAX evaluates a constraint in `jax.grad` eagerly.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace

from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.evaluator import Frame
from shardls.analysis.library.differentiation import PASS_THROUGH
from shardls.analysis.reuse import frame_key, reuse_of
from shardls.analysis.values import BoundMethod, FunctionV, TransformedV, Value, options
from shardls.analysis.walker import MAX_CONTEXTS, Context, Visit, Walker, body_contexts, first_arguments

_CALLEES = ("grad", "value_and_grad", "checkpoint", "remat")
"""How the transforms are called in the text (`jax.grad(...)`, `nnx.value_and_grad(...)`)."""


@body_contexts(rank=2)  # grad, value_and_grad, checkpoint: the plain call's arguments
def transformed_bodies(
    walker: Walker, info: FunctionInfo, frame: Frame, context: Context, depth: int
) -> list[tuple[dict[str, Value], Context]]:
    """One context per call of the transformed function, with its arguments bound."""
    found: list[tuple[dict[str, Value], Context]] = []
    evaluator = walker.evaluator
    for transform in _CALLEES:
        if info.name not in first_arguments(walker.module, transform):
            continue
        for visit in walker.calls_named(transform, depth):
            for called in _calls_of(walker, visit, info, depth):
                args, kwargs = evaluator.call_arguments(called.call, called.frame)
                locals_ = evaluator.bind_arguments(info, args, kwargs, None, called.frame)
                where = f"{ast.unparse(visit.call.func)}({info.name})(...) at line {called.frame.line_of(called.call) + 1}"
                found.append((locals_, replace(called.context, call_site=where, traced=True)))
                if len(found) >= MAX_CONTEXTS:
                    return with_closure(found, info, frame)
    return with_closure(found, info, frame)


def with_closure(
    found: list[tuple[dict[str, Value], Context]], info: FunctionInfo, frame: Frame
) -> list[tuple[dict[str, Value], Context]]:
    """A nested loss function reads its enclosing call's arguments too (`segment_ids` in
    `def loss(q): ... f(q, segment_ids)`)."""
    closure = {name: value for name, value in frame.locals.items() if name not in info.scope.final}
    return [({**closure, **locals_}, caller) for locals_, caller in found]


def _calls_of(walker: Walker, visit: Visit, info: FunctionInfo, depth: int) -> Iterator[Visit]:
    """The calls of what `visit` (a `jax.grad(f, ...)` call) makes of `info`: called at once
    (`jax.grad(f)(x)`), or through the name it is assigned to (`grad_fn(x)`)."""
    first = visit.call.args[0] if visit.call.args else None
    if not (isinstance(first, ast.Name) and first.id == info.name):
        return
    if not any(
        _transforms(option, visit.call, info) for option in options(_value(walker, visit.call, visit))
    ):
        return
    parent = visit.parent
    if parent is not None and parent.func is visit.call:
        yield Visit(parent, visit.frame, visit.context, visit.statement, None)
        return
    if visit.target is None:
        return
    for called in walker.calls_named(visit.target, depth):
        if any(
            _transforms(option, visit.call, info)
            for option in options(_value(walker, called.call.func, called))
        ):
            yield called


def _value(walker: Walker, node: ast.expr, visit: Visit) -> Value:
    """`node` evaluated where `visit` is, once per node and frame (`analysis/reuse.py`), not
    once per function named `f`: a test file defines `f` in hundreds of tests, and each
    evaluated every `jax.grad(f)` of the file and every call of what it was assigned to."""
    key = ("transform", id(node), frame_key(visit.frame))
    return reuse_of(walker.evaluator).answer(
        key, (node, visit.frame), lambda: walker.evaluator.evaluate(node, visit.frame)
    )


def _transforms(value: Value, node: ast.Call, info: FunctionInfo) -> bool:
    """Whether `value` is the transform made by the call `node` of the function `info`."""
    if not isinstance(value, BoundMethod) or not isinstance(value.base, TransformedV):
        return False
    wrapped = value.base
    return (
        wrapped.node is node
        and wrapped.api in PASS_THROUGH
        and any(isinstance(f, FunctionV) and f.func.node is info.node for f in options(wrapped.func))
    )
