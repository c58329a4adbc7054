"""Reshapes, transposes, squeezes, broadcasts, joins and splits, as functions, methods and `.T`:
the operations that move sharded dimensions around.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from shardls.analysis.sharded.propagate import UNREADABLE, Unreadable, apply, spec_argument, typed, untyped
from shardls.analysis.sharded.registry import JNP, apply_call, axis_argument, calls, ints_argument, methods
from shardls.analysis.values import Const, Seq, TypedArray, Unknown, Value, as_int
from shardls.core.typing import (
    ShardedType,
    array_split,
    broadcast_to,
    concatenate,
    expand_dims,
    lax_concatenate,
    moveaxis,
    reshape,
    split,
    squeeze,
    stack,
    swapaxes,
    transpose,
)

if TYPE_CHECKING:
    from shardls.analysis.evaluator import Evaluator, Frame
    from shardls.analysis.library import CallArgs


@calls(JNP + "reshape", "jax.lax.reshape")
def _reshape_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a", "operand"))
    sizes = ints_argument(call.get(1, "shape", "new_sizes", "newshape"))
    if x is None:
        return base
    return _reshaped(call, x, sizes, base)


@calls(JNP + "transpose")
def _transpose_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    axes = call.get(1, "axes")
    perm = None if axes is None or (isinstance(axes, Const) and axes.value is None) else ints_argument(axes)
    if x is None:
        return base
    if perm is UNREADABLE:
        return untyped(base)
    return apply_call(call, [x], lambda: transpose(x.type, perm), base)


@calls(JNP + "swapaxes")
def _swapaxes_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    one, two = as_int(call.get(1, "axis1") or Const(None)), as_int(call.get(2, "axis2") or Const(None))
    if x is None or one is None or two is None:
        return untyped(base)
    return apply_call(call, [x], lambda: swapaxes(x.type, one, two), base)


@calls(JNP + "moveaxis")
def _moveaxis_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    src, dst = as_int(call.get(1, "source") or Const(None)), as_int(call.get(2, "destination") or Const(None))
    if x is None or src is None or dst is None:
        return untyped(base)
    return apply_call(call, [x], lambda: moveaxis(x.type, src, dst), base)


@calls(JNP + "expand_dims")
def _expand_dims_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    axes = axis_argument(call.get(1, "axis"), default=UNREADABLE)
    if x is None or axes is UNREADABLE or axes is None:
        return untyped(base)
    return apply_call(call, [x], lambda: expand_dims(x.type, axes), base)


@calls(JNP + "squeeze")
def _squeeze_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    axes = axis_argument(call.get(1, "axis"), default=None)
    if x is None or axes is UNREADABLE:
        return untyped(base)
    return apply_call(call, [x], lambda: squeeze(x.type, axes), base)


@calls(JNP + "concatenate", JNP + "concat", JNP + "stack", "jax.lax.concatenate")
def _join(call: CallArgs, base: Value | None) -> Value | None:
    """`jnp.concatenate([x, y], axis)`, `jnp.stack(...)`, `lax.concatenate(operands, dimension)`."""
    arrays = call.get(0, "arrays", "operands")
    items = arrays.items if isinstance(arrays, Seq) else None
    operands = [typed(v) for v in items] if items is not None else []
    if not operands or any(t is None for t in operands):
        return untyped(base) if any(operands) else base
    known = [t for t in operands if t is not None]
    if len({t.type.mesh for t in known}) != 1:
        return untyped(base)
    types = [t.type for t in known]
    name = call.qualname.rsplit(".", 1)[-1]
    if call.qualname == "jax.lax.concatenate":
        dimension = as_int(call.get(1, "dimension") or Const(None))
        if dimension is None:
            return untyped(base)
        return apply_call(call, known, lambda: lax_concatenate(types, dimension), base)
    axis = axis_argument(call.get(1, "axis"), default=0)
    if axis is UNREADABLE or isinstance(axis, tuple) or call.get(None, "dtype", "out") is not None:
        return untyped(base)
    if name == "stack":
        if axis is None:
            return untyped(base)
        at = axis
        return apply_call(call, known, lambda: stack(types, at), base, realign=lambda ops: stack(ops, at))
    return apply_call(
        call, known, lambda: concatenate(types, axis), base, realign=lambda ops: concatenate(ops, axis)
    )


@calls(JNP + "split", JNP + "array_split")
def _split(call: CallArgs, base: Value | None) -> Value | None:
    """`jnp.split(x, 4, axis=1)`: one typed array per piece (a list of them)."""
    x = typed(call.get(0, "ary"))
    sections = call.get(1, "indices_or_sections")
    count = as_int(sections) if sections is not None else None
    points = ints_argument(sections) if count is None else (count,)
    axis = as_int(call.get(2, "axis") or Const(0))
    if x is None or points is UNREADABLE or axis is None:
        return untyped(base) if x else base
    rule = split if call.qualname.endswith(".split") else array_split
    pieces_of = count if count is not None else list(points)
    try:
        pieces = rule(x.type, pieces_of, axis)
    except Exception:  # (rejected or malformed: `apply` records or drops it)
        return apply_call(call, [x], lambda: rule(x.type, pieces_of, axis)[0], base)
    values = [apply_call(call, [x], _constant(t), None) for t in pieces]
    return Seq(tuple(v if v is not None else Unknown("a piece of split") for v in values), is_list=True)


def _constant(t: ShardedType) -> Callable[[], ShardedType]:
    return lambda: t


@calls(JNP + "broadcast_to")
def _broadcast_to(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "array"))
    shape = ints_argument(call.get(1, "shape"))
    if x is None or shape is UNREADABLE or call.get(None, "out_sharding") is not None:
        return untyped(base) if x else base
    return apply_call(call, [x], lambda: broadcast_to(x.type, shape), base)


@calls(JNP + "ravel")
def _ravel(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    if x is None or call.get(1, "order") is not None:
        return untyped(base) if x else base
    return apply_call(call, [x], lambda: reshape(x.type, (x.type.size,)), base)


@methods("reshape")
def _reshape_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    given = call.args[0] if len(call.args) == 1 else Seq(tuple(call.args))
    return _reshaped(call, x, ints_argument(given), base)


@methods("ravel", "flatten")
def _ravel_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    if call.args or call.kwargs:
        return untyped(base)
    return apply_call(call, [x], lambda: reshape(x.type, (x.type.size,)), base)


@methods("transpose")
def _transpose_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    given = call.args[0] if len(call.args) == 1 else Seq(tuple(call.args))
    perm = None if not call.args else ints_argument(given)
    if perm is UNREADABLE:
        return untyped(base)
    return apply_call(call, [x], lambda: transpose(x.type, perm), base)


@methods("swapaxes")
def _swapaxes_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    one, two = as_int(call.get(0, "axis1") or Const(None)), as_int(call.get(1, "axis2") or Const(None))
    if one is None or two is None:
        return untyped(base)
    return apply_call(call, [x], lambda: swapaxes(x.type, one, two), base)


@methods("squeeze")
def _squeeze_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    axes = axis_argument(call.get(0, "axis"), default=None)
    if axes is UNREADABLE:
        return untyped(base)
    return apply_call(call, [x], lambda: squeeze(x.type, axes), base)


def typed_attribute(
    evaluator: Evaluator, base: Value, attr: str, node: ast.AST, frame: Frame, result: Value | None
) -> Value | None:
    """`x.T` (`x.mT` swaps the last two dimensions)."""
    x = typed(base)
    if x is None or attr not in ("T", "mT"):
        return result
    if attr == "T":
        return apply(evaluator, frame, node, ".T", [x], lambda: transpose(x.type), result)
    return apply(evaluator, frame, node, ".mT", [x], lambda: swapaxes(x.type, -1, -2), result)


def _reshaped(
    call: CallArgs, x: TypedArray, sizes: tuple[int, ...] | Unreadable, base: Value | None
) -> Value | None:
    out = spec_argument(call.get(None, "out_sharding"))
    if sizes is UNREADABLE or out is UNREADABLE or call.get(None, "order") is not None:
        return untyped(base)
    refit = None if out is not None else lambda ops, spec: reshape(ops[0], sizes, out_sharding=spec)
    return apply_call(call, [x], lambda: reshape(x.type, sizes, out_sharding=out), base, refit=refit)
