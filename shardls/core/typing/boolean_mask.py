"""Boolean masks as indices: `x[mask]`, `x.at[mask].set(v)`.

JAX turns a mask into the integer positions of its `True` entries (`expand_bool_indices`, with
`np.where`), so the result's shape is the mask's count: known only when the mask's values are.
A traced mask has no values, and JAX raises `NonConcreteBooleanIndexError` whatever they would
be; a concrete one (eager code) works, with a shape no type can state ahead of the data.
"""

from __future__ import annotations

from shardls.core.typing.errors import ShapeError, reject
from shardls.core.typing.index_entries import Index
from shardls.core.typing.promotion import BOOL
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
