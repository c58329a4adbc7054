"""Sorting along an axis: `jnp.sort`, `jnp.argsort`, `lax.top_k`.

Sorting moves every element of a row along the sorted axis, so JAX's rules (`sort_p` and
`top_k_p` abstract evaluation) ask for that axis to be unsharded; the other dimensions keep their
sharding. `axis=None` sorts the flattened array (a reshape first).
"""

from __future__ import annotations

from shardls.core.typing.concatenate import sharding_text
from shardls.core.typing.errors import VALUE_ERROR, ShapeError, reject
from shardls.core.typing.promotion import INT32
from shardls.core.typing.reshape import reshape
from shardls.core.typing.types import ShardedType, format_type


def _dimension(x: ShardedType, axis: int | None) -> tuple[ShardedType, int]:
    """`canonicalize_axis`, after flattening for `axis=None`."""
    if axis is None:
        x, axis = reshape(x, (x.size,)), 0
    if not -x.rank <= axis < x.rank:
        raise ShapeError(f"axis {axis} is out of bounds for array of dimension {x.rank}", VALUE_ERROR)
    return x, axis % x.rank


def _check_sortable(x: ShardedType) -> None:
    if x.unreduced or x.reduced:
        raise NotImplementedError("sorting unreduced or reduced arrays is not modelled")


def sort(x: ShardedType, axis: int | None = -1) -> ShardedType:
    """`jnp.sort(x, axis)` (also `descending=`, a `rev` that keeps the sharding)."""
    _check_sortable(x)
    x, dimension = _dimension(x, axis)
    if x.spec[dimension]:
        raise reject(
            "SH314",
            "Arguments to sort must be unsharded over the sorting dimension. "
            f"Got arg sharding={sharding_text(x)} and sorting dimension={dimension}",
            operation="sort",
            dimension=dimension,
        )
    return x


def argsort(x: ShardedType, axis: int | None = -1) -> ShardedType:
    """`jnp.argsort(x, axis)`: an int32 iota laid out like `x`, sorted along with it."""
    y = sort(x, axis)
    return ShardedType(y.shape, INT32, y.mesh, y.spec)


def top_k(x: ShardedType, k: int, axis: int = -1) -> tuple[ShardedType, ShardedType]:
    """`lax.top_k(x, k, axis=axis)`: the values and their int32 indices, `k` along `axis` (both
    keep `x`'s weak type: JAX updates the operand's aval for each)."""
    _check_sortable(x)
    if k < 0:
        raise ShapeError(f"k argument to top_k must be nonnegative, got {k}", VALUE_ERROR)
    if not -x.rank <= axis < x.rank:
        raise ShapeError(f"axis {axis} is out of bounds for array of dimension {x.rank}", VALUE_ERROR)
    axis %= x.rank
    if x.dtype.name.startswith("complex"):
        raise ShapeError("top_k is not compatible with complex inputs.", VALUE_ERROR)
    if x.shape[axis] < k:
        raise ShapeError(
            "k argument to top_k must be no larger than size along axis;"
            f" got k={k} with shape={list(x.shape)} and axis={axis}",
            VALUE_ERROR,
        )
    if x.spec[axis]:
        operand = format_type(x.dtype.name, x.shape, x.spec, x.mesh)
        raise reject(
            "SH314",
            "The input should be unsharded over the axis along which to compute the top_k values. "
            f"Got input type={operand} and axis={axis}",
            operation="top_k",
            dimension=axis,
        )
    shape = tuple(k if i == axis else n for i, n in enumerate(x.shape))
    values = x.with_spec(x.spec, shape=shape)
    return values, ShardedType(shape, INT32, x.mesh, x.spec, weak_type=x.weak_type)
