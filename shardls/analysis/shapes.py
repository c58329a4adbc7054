"""Shapes of array arithmetic: numpy broadcasting for elementwise operators, `@` (matmul),
`dot`, `einsum`, and basic indexing (`x[0:4, None, ...]`).

Function bodies under `jax.jit`/`jax.shard_map` are mostly arithmetic on their parameters
(`x * 2`, `x @ w + b`); knowing the result's shape is what lets the analysis lay out their outputs,
and what an `out_sharding=` on such an operation (`jnp.einsum(..., out_sharding=P(...))`) applies to.
Dimensions are abstract values, so an unknown size stays unknown instead of failing.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Sequence
from types import EllipsisType

from shardls.analysis.values import ArrayV, Const, Unknown, UnknownInt, Value, as_int

Shape = tuple[Value, ...]
IndexItem = int | slice | None | EllipsisType
"""One entry of a basic index: an integer, a slice with integer bounds, None (a new axis) or `...`."""

_ELEMENTWISE = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.BitAnd,
    ast.BitOr,
    ast.BitXor,
    ast.LShift,
    ast.RShift,
)


def array_operation(op: type[ast.operator], left: Value, right: Value) -> Value | None:
    """The array `left op right` gives, or None when neither operand is an array."""
    if not isinstance(left, ArrayV) and not isinstance(right, ArrayV):
        return None
    if op is ast.MatMult:
        return _matmul(left, right)
    if not issubclass(op, _ELEMENTWISE):
        return None
    if isinstance(left, ArrayV) and isinstance(right, ArrayV):
        return _broadcast_arrays(left, right)
    array, other = (left, right) if isinstance(left, ArrayV) else (right, left)
    assert isinstance(array, ArrayV)
    if (isinstance(other, Const) and isinstance(other.value, (int, float, bool))) or isinstance(
        other, UnknownInt
    ):
        return array  # a number keeps the array's shape, dtype (weak typing) and sharding
    return ArrayV(None, array.dtype)


def _broadcast_arrays(left: ArrayV, right: ArrayV) -> Value:
    """The broadcast shape; the sharding of the operands that already have that shape when they
    agree on it (an elementwise result is laid out like them)."""
    if left.shape is None or right.shape is None:
        return ArrayV(None, left.dtype)
    shape = broadcast(left.shape, right.shape)
    if shape is None:
        return Unknown("shapes that do not broadcast")
    shardings = {operand.sharding for operand in (left, right) if operand.shape == shape}
    return ArrayV(shape, left.dtype, shardings.pop() if len(shardings) == 1 else None)


def broadcast(left: tuple[Value, ...], right: tuple[Value, ...]) -> tuple[Value, ...] | None:
    """numpy's broadcasting of two shapes (aligned on the right); None when they clash."""
    rank = max(len(left), len(right))
    padded_left = (Const(1),) * (rank - len(left)) + left
    padded_right = (Const(1),) * (rank - len(right)) + right
    dims: list[Value] = []
    for a, b in zip(padded_left, padded_right):
        dim = _broadcast_dim(a, b)
        if dim is None:
            return None
        dims.append(dim)
    return tuple(dims)


def _broadcast_dim(a: Value, b: Value) -> Value | None:
    size_a, size_b = as_int(a), as_int(b)
    if size_a == 1:
        return b
    if size_b == 1 or a == b:
        return a
    if size_a is not None and size_b is not None:
        return None
    # One size is unknown: in a program that runs, it is 1 or equal to the known one.
    return a if size_a is not None else b if size_b is not None else Unknown("broadcast of unknown sizes")


def _matmul(left: Value, right: Value) -> Value:
    """numpy's matmul shape rule: (..., m, k) @ (..., k, n) -> (..., m, n), with 1-D operands
    promoted and the promoted dimension dropped."""
    if not (isinstance(left, ArrayV) and isinstance(right, ArrayV)):
        return Unknown("matmul with an operand that is not an array")
    a, b = left.shape, right.shape
    if a is None or b is None or not a or not b:
        return ArrayV(None, left.dtype)
    inner_a, inner_b = a[-1], b[0] if len(b) == 1 else b[-2]
    if as_int(inner_a) is not None and as_int(inner_b) is not None and as_int(inner_a) != as_int(inner_b):
        return Unknown("matmul of mismatched inner dimensions")
    batch = broadcast(a[:-2], b[:-2])
    if batch is None:
        return Unknown("matmul batch dimensions that do not broadcast")
    rows = a[-2:-1]
    columns = b[-1:] if len(b) > 1 else ()
    return ArrayV(batch + rows + columns, left.dtype)


def dot_shape(a: Shape, b: Shape) -> Shape | None:
    """numpy's `dot`: a scalar scales the other operand; otherwise the last axis of `a` meets the
    only axis of a 1-D `b`, or its second-to-last. None when the contracted sizes differ."""
    if not a or not b:
        return a or b
    contracted = b[0] if len(b) == 1 else b[-2]
    if _known_and_different(a[-1], contracted):
        return None
    return a[:-1] + (b[:-2] + b[-1:] if len(b) > 1 else ())


def einsum_shape(subscripts: str, operands: Sequence[Shape | None]) -> Shape | None:
    """numpy's `einsum` in its string form (`"bd,df->bf"`, `"...d,df"`): each output label takes
    its size from the operands; without `->` the output is `...` then the labels used once, in
    alphabetical order. None when an operand's shape is unknown or the subscripts do not fit."""
    inputs, arrow, output = subscripts.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands) or any(shape is None for shape in operands):
        return None
    sizes: dict[str, Value] = {}
    ellipses: list[Shape] = []
    for term, shape in zip(terms, operands):
        assert shape is not None
        if not _read_term(term, shape, sizes, ellipses):
            return None
    if not arrow:
        uses = Counter(inputs.replace("...", "").replace(",", ""))
        output = ("..." if ellipses else "") + "".join(sorted(c for c, n in uses.items() if n == 1))
    ellipsis = _broadcast_all(ellipses)
    before, dots, after = output.partition("...")
    if (dots and ellipsis is None) or any(label not in sizes for label in before + after):
        return None
    middle = ellipsis if dots and ellipsis is not None else ()
    return tuple(sizes[c] for c in before) + middle + tuple(sizes[c] for c in after)


def _read_term(term: str, shape: Shape, sizes: dict[str, Value], ellipses: list[Shape]) -> bool:
    """Size every label of one operand's term (`b...d`); False when the term does not fit its shape."""
    before, dots, after = term.partition("...")
    labels = before + after
    if labels and not (labels.isascii() and labels.isalpha()):
        return False
    if len(before) + len(after) > len(shape) or (not dots and len(before) != len(shape)):
        return False
    if dots:
        ellipses.append(shape[len(before) : len(shape) - len(after)])
    dims = shape[: len(before)] + shape[len(shape) - len(after) :]
    for label, dim in zip(labels, dims):
        known = sizes.get(label)
        if known is None or as_int(known) == 1:
            sizes[label] = dim
        elif as_int(dim) != 1 and _known_and_different(known, dim):
            return False
    return True


def _broadcast_all(shapes: list[Shape]) -> Shape | None:
    result: Shape | None = ()
    for shape in shapes:
        result = broadcast(result, shape) if result is not None else None
    return result


def index_shape(shape: Shape, index: tuple[IndexItem, ...]) -> Shape | None:
    """numpy's basic indexing: an integer drops its axis, a slice keeps the elements it selects,
    None adds an axis of 1, and `...` stands for the axes not named. None when the index has more
    entries than the array has axes."""
    named = sum(1 for item in index if item is not None and item is not Ellipsis)
    if named > len(shape) or index.count(Ellipsis) > 1:
        return None
    rest: list[IndexItem] = [slice(None)] * (len(shape) - named)
    items = list(index)
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at : at + 1] = rest
    else:
        items += rest
    dims = iter(shape)
    result: list[Value] = []
    for item in items:
        if item is None:
            result.append(Const(1))
        elif isinstance(item, slice):
            result.append(_sliced(next(dims), item))
        else:
            next(dims)
    return tuple(result)


def _sliced(dim: Value, window: slice) -> Value:
    if not all(b is None or isinstance(b, int) for b in (window.start, window.stop, window.step)):
        return Unknown("a slice whose bounds are not known here")
    size = as_int(dim)
    if size is None or size < 0:  # a negative size is an array JAX refuses to make
        everything = window.start is None and window.stop is None and window.step in (None, 1)
        return dim if everything else Unknown("a slice of a dimension of unknown size")
    start, stop, step = window.indices(size)
    return Const(max(0, -(-(stop - start) // step)))


def _known_and_different(a: Value, b: Value) -> bool:
    size_a, size_b = as_int(a), as_int(b)
    return size_a is not None and size_b is not None and size_a != size_b
