"""Splitting an array: `jnp.split`, `jnp.array_split`, `lax.split`.

`_split_sharding_rule` gives every piece the operand's sharding, so a piece of a sharded dimension
must stay divisible by its mesh axes (the same rule as slicing): `jnp.split(x, 2)` of
`f32[8@X]` over X=2 gives two `f32[4@X]`, 8 sections are refused.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardls.core.typing.errors import VALUE_ERROR, ShapeError
from shardls.core.typing.index_entries import INDEX_ERROR
from shardls.core.typing.results import result
from shardls.core.typing.slicing import check_varying_shape
from shardls.core.typing.types import ShardedType


def lax_split(x: ShardedType, sizes: Sequence[int], axis: int = 0) -> list[ShardedType]:
    """`lax.split(x, sizes, axis)`: one piece per size, each with the operand's sharding."""
    if not -x.rank <= axis < x.rank:
        raise ShapeError(f"axis {axis} is out of bounds for array of dimension {x.rank}", VALUE_ERROR)
    dim = axis % x.rank
    if any(s < 0 for s in sizes):
        raise ShapeError(f"Sizes passed to split must be nonnegative, got {list(sizes)}", VALUE_ERROR)
    if sum(sizes) != x.shape[dim]:
        raise ShapeError(
            f"Sum of sizes {sum(sizes)} must be equal to dimension {dim} of the operand shape {list(x.shape)}",
            VALUE_ERROR,
        )
    pieces = []
    for size in sizes:
        shape = x.shape[:dim] + (size,) + x.shape[dim + 1 :]
        check_varying_shape(x, shape, "split")
        pieces.append(
            result(
                "split",
                [x],
                shape,
                x.dtype,
                x.spec,
                unreduced=x.unreduced,
                reduced=x.reduced,
                weak_type=x.weak_type,
            )
        )
    return pieces


def split(x: ShardedType, sections: int | Sequence[int], axis: int = 0) -> list[ShardedType]:
    """`jnp.split(x, sections, axis)`: equal pieces, or pieces between the given split points."""
    return _split("split", x, sections, axis)


def array_split(x: ShardedType, sections: int | Sequence[int], axis: int = 0) -> list[ShardedType]:
    """`jnp.array_split(x, sections, axis)`: like `split`, the first pieces one longer when the
    sections do not divide the dimension."""
    return _split("array_split", x, sections, axis)


def _split(op: str, x: ShardedType, sections: int | Sequence[int], axis: int) -> list[ShardedType]:
    """`jnp._split`: the piece sizes, then `lax.split`."""
    if not -x.rank <= axis < x.rank:
        raise ShapeError("tuple index out of range", INDEX_ERROR)
    size = x.shape[axis]
    if isinstance(sections, int):
        if sections == 0:
            raise ShapeError("integer division or modulo by zero", "ZeroDivisionError")
        part, rest = divmod(size, sections)
        if rest == 0:
            sizes = [part] * sections
        elif op == "array_split":
            sizes = [part + 1] * rest + [part] * (sections - rest)
        else:
            raise ShapeError(f"array split does not result in an equal division: rest is {rest}", VALUE_ERROR)
    else:
        points = [0, *sections, size]
        sizes = [b - a for a, b in zip(points, points[1:], strict=False)]
    return lax_split(x, sizes, axis)
