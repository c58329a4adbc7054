"""Operations that move, add or drop dimensions without touching data: `transpose` (`.T`,
`swapaxes`, `moveaxis`), `expand_dims` (and `x[None]`), `squeeze`.

Each dimension keeps its mesh axes: `_transpose_sharding_rule` permutes the spec, `squeeze`
drops the entries of the size-1 dimensions, and `expand_dims` (a `broadcast_in_dim`) inserts
unsharded ones. broadcast_in_dim has no rule for unreduced or reduced operands.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardls.core.typing.elementwise import not_implemented_for_unreduced
from shardls.core.typing.errors import VALUE_ERROR, ShapeError
from shardls.core.typing.types import ShardedType


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} is out of bounds for array of dimension {rank}", VALUE_ERROR)
    return axis % rank


def transpose(x: ShardedType, perm: Sequence[int] | None = None) -> ShardedType:
    """`jnp.transpose(x, perm)`; `perm=None` reverses the dimensions (`x.T`)."""
    order = tuple(range(x.rank))[::-1] if perm is None else tuple(_axis(p, x.rank) for p in perm)
    if sorted(order) != list(range(x.rank)):
        raise ShapeError(
            f"transpose permutation isn't a permutation of operand dimensions, got {order}", VALUE_ERROR
        )
    return x.with_spec(tuple(x.spec[i] for i in order), shape=tuple(x.shape[i] for i in order))


def swapaxes(x: ShardedType, axis1: int, axis2: int) -> ShardedType:
    perm = list(range(x.rank))
    a, b = _axis(axis1, x.rank), _axis(axis2, x.rank)
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def moveaxis(x: ShardedType, source: int, destination: int) -> ShardedType:
    src, dst = _axis(source, x.rank), _axis(destination, x.rank)
    perm = [i for i in range(x.rank) if i != src]
    perm.insert(dst, src)
    return transpose(x, perm)


def expand_dims(x: ShardedType, axes: int | Sequence[int], *, keeps_unreduced: bool = False) -> ShardedType:
    """`jnp.expand_dims`: new unsharded size-1 dimensions at `axes` (of the result).

    `keeps_unreduced`: the `keepdims` of a reduction, which keeps unreduced/reduced axes."""
    wanted = (axes,) if isinstance(axes, int) else tuple(axes)
    rank = x.rank + len(wanted)
    where = sorted(_axis(a, rank) for a in wanted)
    if len(set(where)) != len(where):
        raise ShapeError(f"repeated axis in expand_dims: {wanted}", VALUE_ERROR)
    if not where:
        return x
    if not keeps_unreduced:
        not_implemented_for_unreduced("broadcast_in_dim", x)
    shape, spec = list(x.shape), list(x.spec)
    for a in where:
        shape.insert(a, 1)
        spec.insert(a, ())
    return x.with_spec(tuple(spec), shape=tuple(shape))


def squeeze(x: ShardedType, axes: int | Sequence[int] | None = None) -> ShardedType:
    """`jnp.squeeze`: drop size-1 dimensions (all of them when `axes` is None)."""
    if axes is None:
        dims = tuple(i for i, n in enumerate(x.shape) if n == 1)
    else:
        dims = tuple(_axis(a, x.rank) for a in ((axes,) if isinstance(axes, int) else axes))
        if any(x.shape[d] != 1 for d in dims):
            raise ShapeError(
                f"cannot select an axis to squeeze out which has size not equal to one, got shape={x.shape} and dimensions={dims}",
                VALUE_ERROR,
            )
    if not dims:
        return x
    keep = [i for i in range(x.rank) if i not in dims]
    return x.with_spec(tuple(x.spec[i] for i in keep), shape=tuple(x.shape[i] for i in keep))
