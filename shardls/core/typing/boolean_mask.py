"""Boolean masks as indices: `x[mask]`, `x.at[mask].set(v)`.

JAX turns a mask into the integer positions of its `True` entries (`expand_bool_indices`, with
`np.where`), so the result's shape is the mask's count: known only when the mask's values are.
A traced mask has no values, and JAX raises `NonConcreteBooleanIndexError` whatever they would
be; a concrete one (eager code) works, with a shape no type can state ahead of the data. An
eager update `x.at[mask].set(scalar)` keeps `x`'s shape, though, and its type is certain where
it does not depend on how many entries are set (`masked_update`).
"""

from __future__ import annotations

from dataclasses import replace

from shardls.core.spec import PartitionSpec
from shardls.core.typing.errors import ShapeError, reject
from shardls.core.typing.index_entries import INDEX_ERROR, Index
from shardls.core.typing.promotion import BOOL
from shardls.core.typing.results import out_sharding as typed_out_sharding
from shardls.core.typing.types import ShardedType, format_type

NON_CONCRETE_BOOLEAN_INDEX = "NonConcreteBooleanIndexError"
DATA_DEPENDENT = "data-dependent shape"
"""The `jax_error` of a `ShapeError` that is no error: a result whose shape only the data gives."""


def check_boolean_indices(indices: Index | tuple[Index, ...] | list[Index], *, concrete: bool) -> None:
    """Raise for an index holding a boolean array: `TypeRejected` (SH315) when it is traced,
    `ShapeError` (no type, no error) when it is concrete."""
    raw = indices if isinstance(indices, (tuple, list)) else (indices,)
    mask = next((i for i in raw if isinstance(i, ShardedType) and i.dtype == BOOL), None)
    if mask is None:
        return
    if concrete:
        raise ShapeError("the shape of a boolean mask's selection depends on its values", DATA_DEPENDENT)
    text = format_type(mask.dtype.name, mask.shape, mask.spec, mask.mesh, mask.unreduced, mask.reduced)
    raise reject(
        "SH315",
        f"Array boolean indices must be concrete; got {text}",
        NON_CONCRETE_BOOLEAN_INDEX,
        operation="boolean indexing",
    )


def masked_update(
    x: ShardedType, mask: ShardedType, values: ShardedType, out_sharding: PartitionSpec | None
) -> ShardedType:
    """Eager `x.at[mask].<update>(values)` (the mask alone as the index): JAX scatters at the
    mask's `True` positions, gathered by `np.where` into replicated index arrays. With a scalar
    value the result is `x`'s type (or `out_sharding`'s) whatever their number, except that a
    sharded masked dimension is refused unless there are none: that, and array values (which
    must broadcast to the count), only the data decide."""
    masked = x.shape[: mask.rank]
    if mask.rank > x.rank or any(n not in (0, m) for n, m in zip(mask.shape, masked, strict=False)):
        raise ShapeError(
            f"boolean index did not match shape of indexed array in index 0: got {list(mask.shape)}, "
            f"expected {list(masked)}",
            INDEX_ERROR,
        )
    if values.rank:
        raise ShapeError("values broadcast to the number of masked entries", DATA_DEPENDENT)
    if out_sharding is not None:
        return replace(typed_out_sharding(x.mesh, out_sharding, x.shape, x.dtype), weak_type=x.weak_type)
    if any(x.spec[: mask.rank]):
        raise ShapeError("a sharded masked dimension is refused unless no entry is set", DATA_DEPENDENT)
    return x
