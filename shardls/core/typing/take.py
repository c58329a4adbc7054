"""`jnp.take` and `jnp.take_along_axis`: gathers built directly (not through `x[...]`'s indexer,
so no expected slice sharding is checked first), and the general gather sharding rule they need
(`_gather_spec_computation`, with the batching dimensions `take_along_axis` uses).

The dimension taken along must be unsharded in the operand unless it is taken whole; the index
array must be replicated except along batched dimensions, which keep the sharding of whichever
of operand and indices has one (they must agree when both do).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shardls.core.typing.elementwise import not_implemented_for_unreduced
from shardls.core.typing.errors import TYPE_ERROR, VALUE_ERROR, ShapeError
from shardls.core.typing.gather import gather_needs_out_sharding
from shardls.core.typing.index_entries import INDEX_ERROR
from shardls.core.typing.permute import expand_dims, squeeze
from shardls.core.typing.promotion import is_integer
from shardls.core.typing.reshape import reshape
from shardls.core.typing.results import result
from shardls.core.typing.types import DimAxes, ShardedType


@dataclass(frozen=True)
class GatherDims:
    """`GatherDimensionNumbers` (the index vector is the indices' last dimension)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


def general_gather(
    operand: ShardedType, indices: ShardedType, dims: GatherDims, slice_sizes: Sequence[int]
) -> ShardedType:
    """`lax.gather`'s shape and sharding rules (`_gather_shape_computation`,
    `_gather_spec_computation`)."""
    not_implemented_for_unreduced("gather", operand, indices, reduced_too=False)
    rank = len(dims.offset_dims) + indices.rank - 1
    window = [
        (d, s)
        for d, s in enumerate(slice_sizes)
        if d not in dims.collapsed_slice_dims and d not in dims.operand_batching_dims
    ]
    spec = _gather_spec(operand, indices, dims, slice_sizes)
    queries = iter(zip(indices.shape[:-1], spec[:-1], strict=True))
    windows = iter(window)
    shape: list[int] = []
    out_spec: list[DimAxes] = []
    for i in range(rank):
        if i in dims.offset_dims:
            d, size = next(windows)
            shape.append(size)
            out_spec.append(operand.spec[d])
        else:
            n, axes = next(queries)
            shape.append(n)
            out_spec.append(axes)
    return result(
        "gather", [operand], tuple(shape), operand.dtype, tuple(out_spec), weak_type=operand.weak_type
    )


def _gather_spec(
    operand: ShardedType, indices: ShardedType, dims: GatherDims, slice_sizes: Sequence[int]
) -> list[DimAxes]:
    """The indices' spec with the batching dimensions resolved; raises where JAX finds no
    unambiguous output sharding."""
    o, ind = operand.spec, list(indices.spec)
    if not any(o) and not any(ind):
        return ind
    full_or_replicated = all(slice_sizes[d] == operand.shape[d] or not o[d] for d in dims.start_index_map)
    pairs = list(zip(dims.operand_batching_dims, dims.start_indices_batching_dims, strict=True))
    batches_agree = all(ind[i] == o[d] or not o[d] or not ind[i] for d, i in pairs)
    others_replicated = all(not s for i, s in enumerate(ind) if i not in dims.start_indices_batching_dims)
    if not (full_or_replicated and batches_agree and others_replicated):
        raise gather_needs_out_sharding(operand, indices)
    for d, i in pairs:
        ind[i] = ind[i] or o[d]
    return ind


def take(a: ShardedType, indices: ShardedType, axis: int | None = None) -> ShardedType:
    """`jnp.take(a, indices, axis)` (jitted in JAX): a gather of whole slices at `indices` along
    `axis`, of the flattened `a` when `axis` is None."""
    if not is_integer(indices.dtype):
        raise ShapeError("indices must have an integer type", TYPE_ERROR)
    if axis is None:
        a, axis = reshape(a, (a.size,)), 0
    if not -a.rank <= axis < a.rank:
        raise ShapeError(f"axis {axis} is out of bounds for array of dimension {a.rank}", VALUE_ERROR)
    axis %= a.rank
    if a.shape[axis] == 0:
        if indices.size:
            raise ShapeError("Cannot do a non-empty jnp.take() from an empty axis.", INDEX_ERROR)
        return a
    if not indices.size:
        shape = a.shape[:axis] + indices.shape + a.shape[axis + 1 :]
        return ShardedType(shape, a.dtype, a.mesh, ((),) * len(shape), weak_type=a.weak_type)
    n = indices.rank
    offset = (*range(axis), *range(axis + n, a.rank + n - 1))
    slice_sizes = tuple(1 if d == axis else size for d, size in enumerate(a.shape))
    return general_gather(
        a, expand_dims(indices, indices.rank), GatherDims(offset, (axis,), (axis,)), slice_sizes
    )


def take_along_axis(a: ShardedType, indices: ShardedType, axis: int | None = -1) -> ShardedType:
    """`jnp.take_along_axis(a, indices, axis)` (jitted in JAX: eager and traced agree)."""
    if not is_integer(indices.dtype):
        raise ShapeError(
            f"take_along_axis indices must be of integer type, got {indices.dtype.name}", TYPE_ERROR
        )
    if axis is None:
        if indices.rank != 1:
            raise ShapeError(
                f"take_along_axis indices must be 1D if axis=None, got shape {indices.shape}", VALUE_ERROR
            )
        a = reshape(a, (a.size,))
        axis = 0
    rank = a.rank
    if rank != indices.rank:
        raise ShapeError(
            f"indices and arr must have the same number of dimensions; {indices.rank} vs. {a.rank}",
            VALUE_ERROR,
        )
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} is out of bounds for array of dimension {rank}", VALUE_ERROR)
    axis %= rank
    arr_shape = tuple(1 if i == axis else n for i, n in enumerate(a.shape))
    out_shape = _broadcast_shapes(indices.shape, arr_shape)
    if a.shape[axis] == 0:
        return ShardedType(out_shape, a.dtype, a.mesh, ((),) * rank)
    index_dims = [i for i, n in enumerate(indices.shape) if i == axis or n != 1]
    gather_indices = reshape(indices, tuple(out_shape[i] for i in index_dims) + (1,))
    slice_sizes: list[int] = []
    offset: list[int] = []
    batching: list[int] = []
    index_batching: list[int] = []
    collapsed = 0
    squeezed: list[int] = []
    new_i = j = 0
    for i in range(rank):
        if i == axis:
            slice_sizes.append(1)
            collapsed = new_i
            new_i += 1
            j += 1
        elif indices.shape[i] == 1:
            offset.append(i)
            slice_sizes.append(arr_shape[i])
            new_i += 1
        elif arr_shape[i] == 1:
            squeezed.append(i)
            j += 1
        else:
            slice_sizes.append(0 if arr_shape[i] == 0 else 1)
            batching.append(new_i)
            index_batching.append(j)
            new_i += 1
            j += 1
    operand = squeeze(a, squeezed) if squeezed else a
    dims = GatherDims(tuple(offset), (collapsed,), (collapsed,), tuple(batching), tuple(index_batching))
    return general_gather(operand, gather_indices, dims, slice_sizes)


def _broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """`lax.broadcast_shapes` of two shapes of one rank."""
    if any(m != n and 1 not in (m, n) for m, n in zip(a, b, strict=True)):
        raise ShapeError(f"Incompatible shapes for broadcasting: shapes={[a, b]}", VALUE_ERROR)
    return tuple(n if m == 1 else m for m, n in zip(a, b, strict=True))
