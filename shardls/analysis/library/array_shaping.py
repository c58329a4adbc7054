"""numpy/JAX functions that combine or rearrange arrays whose result shape follows from their
operands': the two-operand elementwise functions (`jnp.maximum(a, b)` broadcasts like `a + b`),
`transpose`, `repeat`, `tril`/`triu`, and `split`/`array_split`/`hsplit`/`vsplit`/`dsplit` into a list.

Real code computes its attention scores and masks with these before it constrains or returns
them (maxtext ulysses_collective_test.py: `jnp.repeat(key, group_size, axis=1)`,
`jnp.maximum(jnp.sum(w, axis=-1, keepdims=True), 1e-30)`). Anything not covered exactly (an
axis out of range, repeats given per element) gives an array of unknown rank, never a guess.
"""

from __future__ import annotations

import ast

from shardls.analysis.library import CallArgs
from shardls.analysis.library.registry import calls
from shardls.analysis.shapes import array_operation
from shardls.analysis.values import ArrayV, Const, Seq, Unknown, Value, as_int
from shardls.core import parse_dtype

_MODULES = ("jax.numpy", "numpy")
_ARITHMETIC = (
    "add",
    "subtract",
    "multiply",
    "divide",
    "true_divide",
    "power",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
)
_PREDICATES = (
    "equal",
    "not_equal",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
)
_BOOL = parse_dtype("bool")


@calls(*(f"{m}.{n}" for m in _MODULES for n in (*_ARITHMETIC, *_PREDICATES)))
def _binary(call: CallArgs) -> Value | None:
    """`jnp.maximum(a, b)`: the broadcast of the two, as `a + b` (a comparison is boolean)."""
    left, right = call.get(0, "x1", "x"), call.get(1, "x2", "y")
    if left is None or right is None:
        return None
    result = array_operation(ast.Add, left, right)
    if isinstance(result, ArrayV) and call.qualname.rsplit(".", 1)[-1] in _PREDICATES:
        return ArrayV(result.shape, _BOOL)
    return result


@calls(*(f"{m}.{n}" for m in _MODULES for n in ("tril", "triu")))
def _triangle(call: CallArgs) -> Value | None:
    """`jnp.tril(m)`: the same shape (JAX needs rank ≥ 2)."""
    array = call.get(0, "m")
    if not isinstance(array, ArrayV) or (array.shape is not None and len(array.shape) < 2):
        return None
    return ArrayV(array.shape, array.dtype)


@calls(*(f"{m}.transpose" for m in _MODULES))
def _transpose(call: CallArgs) -> Value | None:
    """`jnp.transpose(x, axes=(0, 2, 1, 3))`: the dims in that order (reversed without `axes`)."""
    array = call.get(0, "a")
    if not isinstance(array, ArrayV):
        return None
    if array.shape is None:
        return ArrayV(None, array.dtype)
    axes = call.get(1, "axes")
    rank = len(array.shape)
    if axes is None or (isinstance(axes, Const) and axes.value is None):
        return ArrayV(tuple(reversed(array.shape)), array.dtype)
    order = [as_int(a) for a in axes.items] if isinstance(axes, Seq) else None
    if order is None or any(i is None for i in order) or len(order) != rank:
        return ArrayV(None, array.dtype)
    positions = [i % rank for i in order if i is not None and -rank <= i < rank]
    if sorted(positions) != list(range(rank)):
        return ArrayV(None, array.dtype)
    return ArrayV(tuple(array.shape[i] for i in positions), array.dtype)


@calls(*(f"{m}.repeat" for m in _MODULES))
def _repeat(call: CallArgs) -> Value | None:
    """`jnp.repeat(x, n, axis=1)`: that dim `n` times longer; without `axis` the array is
    flattened first. Repeats given per element are not followed."""
    array, repeats = call.get(0, "a"), call.get(1, "repeats")
    if not isinstance(array, ArrayV) or repeats is None:
        return None
    count = as_int(repeats)
    if array.shape is None or count is None:
        return ArrayV(None, array.dtype)
    axis = call.get(2, "axis")
    if axis is None or (isinstance(axis, Const) and axis.value is None):
        return ArrayV((_scaled(_product(array.shape), count),), array.dtype)
    rank = len(array.shape)
    index = as_int(axis)
    if index is None or not -rank <= index < rank:
        return ArrayV(None, array.dtype)
    index %= rank
    dims = tuple(_scaled(d, count) if i == index else d for i, d in enumerate(array.shape))
    return ArrayV(dims, array.dtype)


def _scaled(size: Value, count: int) -> Value:
    number = as_int(size)
    return Const(number * count, origin=size.origin) if number is not None else Unknown("a repeated size")


def _product(shape: tuple[Value, ...]) -> Value:
    total = 1
    for dim in shape:
        number = as_int(dim)
        if number is None:
            return Unknown("size of a flattened array")
        total *= number
    return Const(total)


_SPLITS = ("split", "array_split", "hsplit", "vsplit", "dsplit")


@calls(*(f"{m}.{n}" for m in _MODULES for n in _SPLITS))
def _split(call: CallArgs) -> Value | None:
    """`jnp.split(x, 2, axis=1)`, `jnp.split(x, [3, 5])`: a list of arrays, the axis cut into
    equal parts or at the indices (`array_split` gives the first `n % parts` parts one more).
    `hsplit` cuts axis 1 (axis 0 of a vector), `vsplit` axis 0, `dsplit` axis 2. An unknown size gives parts of
    unknown size; an unknown number of parts, or a cut JAX rejects, an unknown list."""
    array = call.get(0, "ary")
    if not isinstance(array, ArrayV):
        return None
    name = call.qualname.rsplit(".", 1)[-1]
    sizes = _parts(array, name, call.get(1, "indices_or_sections"), call.get(2, "axis"))
    if sizes is None:
        return Unknown(f"{name} into parts not known here")
    index, parts = sizes
    return Seq(
        tuple(ArrayV(_replaced(array.shape, index, part), array.dtype) for part in parts),
        is_list=True,
    )


def _parts(
    array: ArrayV, name: str, sections: Value | None, axis: Value | None
) -> tuple[int, list[Value]] | None:
    """The axis cut and the sizes of the parts along it (None when either is not known)."""
    if array.shape is None or not array.shape or sections is None:
        return None
    rank = len(array.shape)
    if name == "hsplit":
        axis = Const(1 if rank > 1 else 0)
    elif name in ("vsplit", "dsplit") or axis is None:
        axis = Const(2 if name == "dsplit" else 0)
    index = as_int(axis)
    if index is None or not -rank <= index < rank:
        return None
    index %= rank
    size = array.shape[index]
    count = as_int(sections)
    if count is not None:
        parts = _equal_parts(size, count, uneven=name == "array_split")
    elif isinstance(sections, Seq):
        parts = _cut_parts(size, [as_int(i) for i in sections.items])
    else:
        return None
    return None if parts is None else (index, parts)


def _equal_parts(size: Value, count: int, *, uneven: bool) -> list[Value] | None:
    """`count` parts of `size` (`split` needs them equal: JAX rejects the rest)."""
    if count <= 0:
        return None
    number = as_int(size)
    if number is None:
        return [Unknown(f"a size cut into {count} parts")] * count
    quotient, rest = divmod(number, count)
    if rest and not uneven:
        return None
    return [Const(quotient + (i < rest), origin=size.origin) for i in range(count)]


def _cut_parts(size: Value, cuts: list[int | None]) -> list[Value] | None:
    """The parts between `0`, the cuts and `size`; JAX takes the differences as sizes, so a cut
    that is unknown, negative, decreasing or past the end leaves the list unknown."""
    if any(cut is None for cut in cuts):
        return None
    number = as_int(size)
    points = [0, *(c for c in cuts if c is not None)]
    if number is not None:
        points.append(number)
    if any(b < a for a, b in zip(points, points[1:], strict=False)):
        return None
    parts: list[Value] = [Const(b - a) for a, b in zip(points, points[1:], strict=False)]
    if number is None:
        parts.append(Unknown("the rest of a size not known here"))
    return parts


def _replaced(shape: tuple[Value, ...] | None, index: int, size: Value) -> tuple[Value, ...] | None:
    return None if shape is None else tuple(size if i == index else d for i, d in enumerate(shape))
