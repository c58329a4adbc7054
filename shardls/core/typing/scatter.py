"""Indexed updates: `x.at[idx].set/add/subtract/multiply/min/max(values)` (`_scatter_update`).

JAX turns the index into the same gather indexer as `x[idx]` (`_index_to_gather`: never the
static or dynamic slice that a read may use, so eager and traced code agree), broadcasts the
values to the selected elements' shape *with the selection's sharding*, and scatters them.
`_scatter_sharding_rule` reads the gather rule in inverse: a dimension the index selects part of
must be unsharded, and the index arrays must be replicated; the result keeps the operand's
sharding. Anything else asks for `out_sharding=`, with which the whole update runs on Auto axes
and the result takes the given spec.
"""

from __future__ import annotations

from dataclasses import replace

from shardls.core.spec import PartitionSpec
from shardls.core.typing.boolean_mask import check_boolean_indices, masked_update
from shardls.core.typing.elementwise import broadcast_to
from shardls.core.typing.errors import SHARDING_TYPE_ERROR, TypeRejected, reject
from shardls.core.typing.gather import check_unique_axes, plan_gather, unsharded
from shardls.core.typing.index_entries import Entry, Index, is_scalar, parse_index
from shardls.core.typing.promotion import BOOL, INT32
from shardls.core.typing.results import check_sharding, result
from shardls.core.typing.results import out_sharding as typed_out_sharding
from shardls.core.typing.types import ShardedType, SpecAxes, format_type

UPDATES = ("set", "add", "subtract", "multiply", "mul", "min", "max")
"""The `x.at[...]` methods that scatter values (`mul` is `multiply`'s old name)."""


def scatter(
    x: ShardedType,
    indices: Index | tuple[Index, ...] | list[Index],
    values: ShardedType,
    *,
    concrete: bool = False,
    out_sharding: PartitionSpec | None = None,
) -> ShardedType:
    """`x.at[indices].set(values)` (and the other updates: one sharding rule serves them all).

    `values` is the update as an array (a Python scalar as a weak rank-0 one); `concrete`: `x`
    is a concrete array (code outside `jax.jit`), which only matters for a boolean mask."""
    if out_sharding is not None:
        check_sharding(x.mesh, out_sharding, x.dtype)
    alone = indices[0] if isinstance(indices, (tuple, list)) and len(indices) == 1 else indices
    if concrete and isinstance(alone, ShardedType) and alone.dtype == BOOL:
        return masked_update(x, alone, values, out_sharding)
    check_boolean_indices(indices, concrete=concrete)
    if any(isinstance(t, ShardedType) and (t.unreduced or t.reduced) for t in (x, values)):
        raise NotImplementedError("scatter of unreduced or reduced arrays is not modelled")
    entries = parse_index(x, indices)
    if out_sharding is not None:
        return _under_auto_axes(x, entries, values, out_sharding)
    plan = plan_gather(x, entries)
    slice_shape, slice_spec = tuple(plan.slice_shape), tuple(plan.slice_spec)
    check_unique_axes(x, slice_spec)
    if 0 in slice_shape:
        return x
    updates = broadcast_to(values, slice_shape, slice_spec)
    if not _resolvable(x, entries) or any(plan.indices_spec):
        raise _needs_out_sharding(x, plan.indices_shape, plan.indices_spec, updates)
    return result("scatter", [x], x.shape, x.dtype, x.spec, weak_type=x.weak_type)


def _under_auto_axes(
    x: ShardedType, entries: list[Entry], values: ShardedType, out_sharding: PartitionSpec
) -> ShardedType:
    """`auto_axes(_scatter_impl, out_sharding=...)`: operand, values and index arrays lose their
    Explicit axes, so only the shapes can be wrong; the result is laid out as given."""
    x_auto = unsharded(x)
    entries = [
        replace(e, index=unsharded(e.index)) if isinstance(e.index, ShardedType) else e for e in entries
    ]
    plan = plan_gather(x_auto, entries)
    slice_shape = tuple(plan.slice_shape)
    if 0 not in slice_shape:
        broadcast_to(unsharded(values), slice_shape, ((),) * len(slice_shape))
    typed = typed_out_sharding(x.mesh, out_sharding, x.shape, x.dtype)
    return replace(typed, weak_type=x.weak_type)


def _resolvable(x: ShardedType, entries: list[Entry]) -> bool:
    """`_scatter_spec_computation` for an indexer without batching dimensions: a dimension the
    window covers (a slice of step 1) is taken whole or unsharded, and a dimension the index
    collapses (an integer, an index array, a strided slice's iota) is unsharded."""
    for e in entries:
        if e.dim is None or not x.spec[e.dim]:
            continue
        if is_scalar(e.index) or isinstance(e.index, ShardedType):
            return False
        assert isinstance(e.index, slice)
        if e.index.step not in (None, 1):
            return False
        if len(range(*e.index.indices(x.shape[e.dim]))) != x.shape[e.dim]:
            return False
    return True


def _needs_out_sharding(
    x: ShardedType, indices_shape: tuple[int, ...], indices_spec: SpecAxes, y: ShardedType
) -> TypeRejected:
    operand, updates = _aval(x), _aval(y)
    indices = _aval(ShardedType(indices_shape, INT32, x.mesh, indices_spec))
    return reject(
        "SH313",
        "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for the scatter "
        "update as out sharding could not be resolved unambiguously (or would require collectives on "
        f"inputs). Got operand={operand}, indices={indices}, updates={updates}",
        SHARDING_TYPE_ERROR,
        operation="scatter",
    )


def _aval(t: ShardedType) -> str:
    """`repr` of an aval, as `_scatter_sharding_rule` prints its operands."""
    return f"ShapedArray({format_type(t.dtype.name, t.shape, t.spec, t.mesh, t.unreduced, t.reduced)})"
