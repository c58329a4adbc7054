"""The gather path of `x[...]` (integer arrays, strided slices beside a traced index, and every
partial index of a concrete sharded array): `_index_to_gather` and `_gather_sharding_rule`.

The rule keeps a dimension's sharding only when the gather takes it whole; a sharded dimension it
indexes into, or a sharded index array, makes JAX ask for `x.at[...].get(out_sharding=)`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from shardls.core.spec import PartitionSpec
from shardls.core.typing.concatenate import same_sharding
from shardls.core.typing.elementwise import broadcast_shardings, broadcast_to, not_implemented_for_unreduced
from shardls.core.typing.errors import (
    DUPLICATE_SPEC_ERROR,
    SHARDING_TYPE_ERROR,
    VALUE_ERROR,
    ShapeError,
    TypeRejected,
    reject,
)
from shardls.core.typing.index_entries import INDEX_ERROR, Entry, is_scalar
from shardls.core.typing.permute import expand_dims
from shardls.core.typing.promotion import INT32
from shardls.core.typing.results import out_sharding as typed_out_sharding
from shardls.core.typing.results import result
from shardls.core.typing.types import DimAxes, ShardedType, SpecAxes, format_type


@dataclass
class GatherPlan:
    """What `_index_to_gather` computes, as far as types need it."""

    out_shape: list[int]
    out_spec: list[DimAxes]
    slice_shape: list[int]
    slice_spec: list[DimAxes]
    newaxis: list[int]
    indices_shape: tuple[int, ...]
    indices_spec: SpecAxes
    taken_dims: list[tuple[int, int]]
    """(operand dim, slice size) of every dimension the gather indexes into (`start_index_map`)."""


def _broadcast(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for sizes in zip(*(((1,) * (rank - len(s)) + s) for s in shapes), strict=True):
        big = {n for n in sizes if n != 1}
        if len(big) > 1:
            raise ShapeError(
                f"Incompatible shapes for broadcasting: shapes={[list(s) for s in shapes]}", VALUE_ERROR
            )
        out.append(big.pop() if big else 1)
    return tuple(out)


def plan_gather(x: ShardedType, entries: list[Entry]) -> GatherPlan:
    """`_index_to_gather`, step for step, keeping shapes and specs only."""
    group = _advanced(entries)
    group_shape, group_specs = _group_type(x, group)
    group_at = _group_position(entries, group)
    plan = GatherPlan([], [], [], [], [], (), (), [])
    indices_shape: list[int] = []
    pieces: list[tuple[int, SpecAxes]] = []
    """Where each piece of the gather indices starts, and its spec (each is broadcast to the
    indices' shape, then all are concatenated)."""
    y_axis = 0
    for pos, e in enumerate(entries):
        if group and pos == group_at:
            pieces.extend((len(indices_shape), spec) for spec in group_specs)
            indices_shape.extend(group_shape)
            for target in (plan.out_shape, plan.slice_shape):
                target.extend(group_shape)
            for spec_target in (plan.out_spec, plan.slice_spec):
                spec_target.extend(group_specs[0])
            plan.taken_dims.extend((a.dim, 1) for a in group if a.dim is not None)
            y_axis += len(group_shape)
        if any(e is a for a in group):
            continue
        if e.dim is None:
            plan.slice_shape.append(1)
            plan.slice_spec.append(())
            plan.newaxis.append(y_axis)
            y_axis += 1
            continue
        size = x.shape[e.dim]
        if is_scalar(e.index):
            if size == 0:
                raise ShapeError(f"index is out of bounds for axis {e.dim} with size 0", INDEX_ERROR)
            pieces.append((len(indices_shape), ()))
            plan.taken_dims.append((e.dim, 1))
            continue
        assert isinstance(e.index, slice)
        if e.index.step == 0:
            raise ShapeError("slice step cannot be zero", VALUE_ERROR)
        taken = len(range(*e.index.indices(size)))
        plan.slice_shape.append(taken)
        plan.slice_spec.append(x.spec[e.dim])
        plan.out_shape.append(taken)
        if e.index.step in (None, 1):
            if taken != size:
                pieces.append((len(indices_shape), ()))
                plan.taken_dims.append((e.dim, taken))
            plan.out_spec.append(x.spec[e.dim])
        else:
            pieces.append((len(indices_shape), ()))
            indices_shape.append(taken)
            plan.taken_dims.append((e.dim, 1))
            plan.out_spec.append(())
        y_axis += 1
    rank = len(indices_shape)
    specs = [((),) * start + spec + ((),) * (rank - start - len(spec)) for start, spec in pieces]
    _check_pieces(x, specs, indices_shape)
    plan.indices_shape = tuple(indices_shape) + ((len(pieces),) if pieces else (0,))
    plan.indices_spec = (specs[0] if specs else ((),) * rank) + ((),)
    return plan


def _advanced(entries: list[Entry]) -> list[Entry]:
    """NumPy's advanced indices: with an integer array among them, every integer index too."""
    if not any(isinstance(e.index, ShardedType) and e.index.rank for e in entries):
        return []
    return [
        e for e in entries if e.dim is not None and (is_scalar(e.index) or isinstance(e.index, ShardedType))
    ]


def _group_position(entries: list[Entry], group: list[Entry]) -> int:
    """The advanced group goes where it stands when its entries are next to each other in the
    index as written (`...` not yet expanded), else first."""
    if not group:
        return 0
    written = [e.written for e in group]
    contiguous = all(b - a == 1 for a, b in zip(written, written[1:], strict=False))
    return entries.index(group[0]) if contiguous else 0


def _group_type(x: ShardedType, group: list[Entry]) -> tuple[tuple[int, ...], list[SpecAxes]]:
    """`util._broadcast_arrays` of the advanced indices: their common shape, and each one's spec
    after it. Arrays of one shape are left as they are (each keeps its own sharding); otherwise
    every one is broadcast to the shape and sharding `lax.broadcast_shardings` chooses."""
    if not group:
        return (), []
    arrays = [
        e.index if isinstance(e.index, ShardedType) else ShardedType((), INT32, x.mesh, ()) for e in group
    ]
    shape = _broadcast([a.shape for a in arrays])
    if all(a.shape == arrays[0].shape for a in arrays):
        specs = [a.spec for a in arrays]
    else:
        _, spec = broadcast_shardings(arrays)
        check_unique_axes(x, spec)
        specs = [broadcast_to(a, shape, spec).spec for a in arrays]
    return shape, specs


def _check_pieces(x: ShardedType, pieces: list[SpecAxes], shape: list[int]) -> None:
    """The gather indices are one `lax.concatenate` of the pieces broadcast to one shape: a
    sharded advanced group beside any other piece (a slice's start, a scalar index) is refused."""
    if len(set(pieces)) > 1:
        same_sharding([ShardedType((*shape, 1), INT32, x.mesh, p + ((),)) for p in pieces])


def gather(x: ShardedType, entries: list[Entry], out_sharding: PartitionSpec | None) -> ShardedType:
    """`_gather`: `lax.gather` of the operand by the index arrays, then `rev` and `expand_dims`;
    an empty result is a `full_like` with the expected slice sharding, and no gather.

    With `out_sharding`, JAX runs all of it under `auto_axes`: the operand and the index arrays
    lose their Explicit axes (so no sharding rule can refuse), and the result takes the spec."""
    if out_sharding is not None:
        x = unsharded(x)
        entries = [
            replace(e, index=unsharded(e.index)) if isinstance(e.index, ShardedType) else e for e in entries
        ]
    plan = plan_gather(x, entries)
    shape = tuple(plan.slice_shape)
    slice_spec = tuple(plan.slice_spec)
    check_unique_axes(x, slice_spec)
    gathers = 0 not in shape and plan.indices_shape[-1] > 0
    if gathers:
        _check_slice_sizes(x, plan)
    if out_sharding is not None:
        return replace(typed_out_sharding(x.mesh, out_sharding, shape, x.dtype), weak_type=x.weak_type)
    if 0 in shape:
        return result("full_like", [x], shape, x.dtype, slice_spec, weak_type=x.weak_type)
    not_implemented_for_unreduced("gather", x, reduced_too=False)
    y = _gather_rule(x, plan) if gathers else x
    return expand_dims(y, plan.newaxis) if plan.newaxis else y


def unsharded(t: ShardedType) -> ShardedType:
    """The type inside `auto_axes`: no Explicit axis left (unreduced/reduced ones with them)."""
    return ShardedType(t.shape, t.dtype, t.mesh, ((),) * t.rank, weak_type=t.weak_type)


def _check_slice_sizes(x: ShardedType, plan: GatherPlan) -> None:
    """The gather's shape rule: no slice larger than its dimension (an index into an empty one)."""
    for d, size in plan.taken_dims:
        if size > x.shape[d]:
            raise ShapeError(
                f"Slice size at index {d} in gather op is out of range, must be within "
                f"[0, {x.shape[d]} + 1), got {size}."
            )


def check_unique_axes(x: ShardedType, spec: SpecAxes) -> None:
    """The expected slice sharding (`canonicalize_sharding`) is built before the gather."""
    seen: set[str] = set()
    for axes in spec:
        for a in axes:
            if a in seen:
                text = ", ".join("None" if not e else repr(e[0]) if len(e) == 1 else repr(e) for e in spec)
                raise reject(
                    "SH308",
                    "A single NamedSharding spec specification can map every mesh axis to at most one "
                    f"positional dimension, but P({text}) has duplicate entries for `{a}`",
                    DUPLICATE_SPEC_ERROR,
                    operation="gather",
                )
            seen.add(a)


def _gather_rule(x: ShardedType, plan: GatherPlan) -> ShardedType:
    """`_gather_sharding_rule`: every dimension indexed into is taken whole or unsharded, and the
    index array is replicated; otherwise JAX asks for `out_sharding`."""
    whole_or_unsharded = all(size == x.shape[d] or not x.spec[d] for d, size in plan.taken_dims)
    indices_replicated = not any(plan.indices_spec)
    if not (whole_or_unsharded and indices_replicated) and (any(x.spec) or any(plan.indices_spec)):
        raise gather_needs_out_sharding(x, ShardedType(plan.indices_shape, INT32, x.mesh, plan.indices_spec))
    return result("gather", [x], tuple(plan.out_shape), x.dtype, tuple(plan.out_spec), weak_type=x.weak_type)


def gather_needs_out_sharding(x: ShardedType, indices: ShardedType) -> TypeRejected:
    """`_gather_sharding_rule`'s error: no output sharding follows from the operand and indices."""
    operand = format_type(x.dtype.name, x.shape, x.spec, x.mesh, x.unreduced, x.reduced)
    index_type = format_type(indices.dtype.name, indices.shape, indices.spec, x.mesh)
    return reject(
        "SH308",
        "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather indexing "
        "as out sharding could not be resolved unambiguously (or would require collectives on "
        f"inputs). Got operand=ShapedArray({operand}), indices=ShapedArray({index_type})",
        SHARDING_TYPE_ERROR,
        operation="gather",
    )
