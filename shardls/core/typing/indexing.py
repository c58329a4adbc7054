"""Indexing and slicing: `x[...]`, `x.at[...].get(out_sharding=)`, `lax.slice`, `lax.dynamic_slice`.

jnp's `rewriting_take` tries three lowerings in turn, and which one runs decides the sharding:

1. a static `lax.slice` (integers, static slices, `None`, `...`), then
2. a `lax.dynamic_slice` (the same, steps of ±1 only, and traced scalar indices), then
3. a `gather` (integer arrays, strided slices next to a traced index).

The slice rules keep the operand's sharding and only require every sharded dimension whose size
changes to stay divisible by its mesh axes. The gather rule keeps a dimension's sharding only when
that dimension is taken whole, and rejects any sharded dimension it indexes into. The first two
are refused for a *concrete* array spread over several devices when the index takes a part of a
dimension (`NDIndexer.is_sharded` sees an `ArrayImpl`; a tracer inside `jit` never is one), so
the same `x[0:4]` is a slice inside `jit` and a gather eagerly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import EllipsisType

from shardls.core.spec import PartitionSpec
from shardls.core.typing.concatenate import same_sharding
from shardls.core.typing.elementwise import broadcast_shardings, not_implemented_for_unreduced
from shardls.core.typing.errors import (
    DUPLICATE_SPEC_ERROR,
    SHARDING_TYPE_ERROR,
    TYPE_ERROR,
    VALUE_ERROR,
    ShapeError,
    reject,
)
from shardls.core.typing.permute import expand_dims, squeeze
from shardls.core.typing.promotion import BOOL, INT32
from shardls.core.typing.results import check_sharding, result, short
from shardls.core.typing.results import out_sharding as typed_out_sharding
from shardls.core.typing.types import DimAxes, ShardedType, SpecAxes, axes_size, format_type

Index = int | slice | None | EllipsisType | ShardedType
"""One entry of `x[...]`: a static integer, a static slice, `None`, `...`, or a traced integer
array (rank 0: a dynamic index; rank 1 or more: a gather). Python bools are not indices here."""

INDEX_ERROR = "IndexError"


@dataclass(frozen=True)
class _Entry:
    """A parsed index entry: the dimension of `x` it consumes (None for `None`)."""

    index: Index
    dim: int | None
    written: int
    """Its position in the index as written (before `...` is expanded)."""


def index(
    x: ShardedType,
    indices: Index | tuple[Index, ...] | list[Index],
    *,
    concrete: bool = False,
    out_sharding: PartitionSpec | None = None,
) -> ShardedType:
    """`x[indices]`, or `x.at[indices].get(out_sharding=...)`.

    `concrete`: `x` is a concrete array (code outside `jax.jit`), so on a mesh of more than one
    device a partial index takes the gather path. `out_sharding` is used by the gather path only
    (a static slice ignores it, as JAX does)."""
    if out_sharding is not None:
        check_sharding(x.mesh, out_sharding, x.dtype)
    entries = _parse(x, indices)
    refused = concrete and x.mesh.size != 1 and _partial(x, entries)
    if not refused:
        if _static_ok(x, entries):
            return _static(x, entries)
        if _dynamic_ok(entries):
            return _dynamic(x, entries)
    return _gather(x, entries, out_sharding)


def _parse(x: ShardedType, indices: Index | tuple[Index, ...] | list[Index]) -> list[_Entry]:
    """`NDIndexer.from_raw_indices` then `expand_ellipses`: one entry per consumed dimension or
    `None`, with the implicit trailing full slices."""
    raw: list[Index] = []
    if isinstance(indices, (tuple, list)):
        raw.extend(indices)
    else:
        raw.append(indices)
    for i in raw:
        if isinstance(i, bool):
            raise ValueError("boolean indices are not modelled")
        if isinstance(i, ShardedType) and i.dtype == BOOL:
            raise ShapeError(
                f"Array boolean indices must be concrete; got {i.dtype.name}{list(i.shape)}",
                "NonConcreteBooleanIndexError",
            )
        if isinstance(i, ShardedType) and not (i.dtype.name.startswith(("int", "uint"))):
            raise ShapeError(
                f"Indexer must have integer or boolean type, got indexer with type {i.dtype.name}", TYPE_ERROR
            )
    ellipses = sum(1 for i in raw if i is Ellipsis)
    if ellipses > 1:
        raise ShapeError("an index can only have a single ellipsis ('...')", INDEX_ERROR)
    consumed = sum(1 for i in raw if i is not None and i is not Ellipsis)
    if consumed > x.rank:
        raise ShapeError(
            f"Too many indices: array is {x.rank}-dimensional, but {consumed} were indexed", INDEX_ERROR
        )
    out: list[_Entry] = []
    dim = 0
    for written, i in enumerate(raw):
        if i is None:
            out.append(_Entry(None, None, written))
        elif i is Ellipsis:
            for _ in range(x.rank - consumed):
                out.append(_Entry(slice(None), dim, written))
                dim += 1
        else:
            out.append(_Entry(i, dim, written))
            dim += 1
    out.extend(_Entry(slice(None), d, len(raw)) for d in range(dim, x.rank))
    return out


def _is_scalar(i: Index) -> bool:
    """An integer, or a traced rank-0 integer array."""
    return isinstance(i, int) or (isinstance(i, ShardedType) and i.rank == 0)


def _partial(x: ShardedType, entries: list[_Entry]) -> bool:
    """`NDIndexer.has_partial_slices`: an integer, or a slice that is not the whole dimension
    (a traced scalar does not count: JAX lets it through to the dynamic slice)."""
    for e in entries:
        if isinstance(e.index, int):
            return True
        if isinstance(e.index, slice) and e.dim is not None:
            size = x.shape[e.dim]
            start, stop, step = e.index.indices(size)
            if abs(step) != 1 or abs(stop - start) != size:
                return True
    return False


def _check_integer_dims(x: ShardedType, entries: list[_Entry]) -> None:
    """XLA cannot index into an empty dimension, whatever the path."""
    for e in entries:
        if _is_scalar(e.index) and e.dim is not None and x.shape[e.dim] == 0:
            raise ShapeError(f"index is out of bounds for axis {e.dim} with size 0", INDEX_ERROR)


def _static_ok(x: ShardedType, entries: list[_Entry]) -> bool:
    """`to_static_slice` accepts only static entries, integers in range and nonzero steps."""
    for e in entries:
        if isinstance(e.index, ShardedType):
            return False
        if isinstance(e.index, int) and e.dim is not None:
            size = x.shape[e.dim]
            if not 0 <= (e.index + size if e.index < 0 else e.index) < size:
                return False
        if isinstance(e.index, slice) and e.index.step == 0:
            return False
    return True


def _dynamic_ok(entries: list[_Entry]) -> bool:
    """`to_dynamic_slice` accepts steps of ±1 and scalar (static or traced) indices only."""
    for e in entries:
        if isinstance(e.index, ShardedType) and e.index.rank:
            return False
        if isinstance(e.index, slice) and e.index.step not in (None, 1, -1):
            return False
    return True


def _finish(y: ShardedType, squeezed: list[int], newaxis: list[int]) -> ShardedType:
    """Squeeze the integer-indexed dimensions, then insert the `None` ones (`lax.expand_dims`)."""
    if squeezed:
        y = squeeze(y, squeezed)
    if newaxis:
        y = expand_dims(y, newaxis)
    return y


def _static(x: ShardedType, entries: list[_Entry]) -> ShardedType:
    """`_static_slice`: one `lax.slice` (unless trivial), `rev`, `squeeze`, `expand_dims`."""
    _check_integer_dims(x, entries)
    start: list[int] = []
    limit: list[int] = []
    strides: list[int] = []
    squeezed: list[int] = []
    newaxis: list[int] = []
    for e in entries:
        if e.dim is None:
            newaxis.append(len(start) - len(squeezed) + len(newaxis))
            continue
        size = x.shape[e.dim]
        if isinstance(e.index, int):
            i = min(max(e.index + size if e.index < 0 else e.index, 0), size - 1)
            start.append(i)
            limit.append(i + 1)
            strides.append(1)
            squeezed.append(e.dim)
        else:
            assert isinstance(e.index, slice)
            first, stop, step = e.index.indices(size)
            if step < 0:
                new_start = min(size, stop + 1 + abs(first - stop - 1) % abs(step))
                start.append(new_start)
                limit.append(max(new_start, first + 1))
                strides.append(abs(step))
            else:
                start.append(first)
                limit.append(max(first, stop))
                strides.append(step)
    trivial = all(s == 1 for s in strides) and all(
        (a, b) == (0, n) for a, b, n in zip(start, limit, x.shape, strict=True)
    )
    y = x if trivial else lax_slice(x, start, limit, None if all(s == 1 for s in strides) else strides)
    return _finish(y, squeezed, newaxis)


def _dynamic(x: ShardedType, entries: list[_Entry]) -> ShardedType:
    """`_dynamic_slice`: one `lax.dynamic_slice` (unless every entry is `:`), `rev`, `squeeze`,
    `expand_dims`."""
    _check_integer_dims(x, entries)
    sizes: list[int] = []
    squeezed: list[int] = []
    newaxis: list[int] = []
    trivial = True
    for e in entries:
        if e.dim is None:
            newaxis.append(len(sizes) - len(squeezed) + len(newaxis))
        elif _is_scalar(e.index):
            trivial = False
            sizes.append(1)
            squeezed.append(e.dim)
        else:
            assert isinstance(e.index, slice)
            trivial = trivial and e.index == slice(None)
            first, stop, step = e.index.indices(x.shape[e.dim])
            if step < 0:
                new_start = stop + 1 + abs(first - stop - 1) % abs(step)
                sizes.append(max(0, first + 1 - new_start))
            else:
                sizes.append(max(0, stop - first))
    y = x if trivial else dynamic_slice(x, sizes)
    return _finish(y, squeezed, newaxis)


def check_varying_shape(x: ShardedType, shape: tuple[int, ...], name: str) -> None:
    """`_get_sharding_for_varying_out_shape`: a sharded dimension whose size changes must stay
    divisible by its mesh axes (JAX does not support uneven shards of a result yet)."""
    for n, out, axes in zip(x.shape, shape, x.spec, strict=True):
        if n != out and axes and out % axes_size(x.mesh, axes):
            size = axes_size(x.mesh, axes)
            spec_text = axes[0] if len(axes) == 1 else "(" + ", ".join(f"'{a}'" for a in axes) + ")"
            raise reject(
                "SH308",
                f"{name} on sharded dims where out dim ({out}) is not divisible by mesh axes ({size}) "
                f"with spec ({spec_text}) is not implemented. Got input type={short(x)} and output "
                f"shape={shape}",
                SHARDING_TYPE_ERROR,
                operation=name,
                size=out,
                factor=size,
            )


def lax_slice(
    x: ShardedType, start: Sequence[int], limit: Sequence[int], strides: Sequence[int] | None = None
) -> ShardedType:
    """`lax.slice(x, start, limit, strides)`: the operand's sharding (unreduced/reduced kept), if
    every sharded dimension whose size changes stays divisible."""
    rank = x.rank
    for name, values in (("start_indices", start), ("limit_indices", limit)):
        if len(values) != rank:
            raise ShapeError(
                f"slice {name} must have length equal to the number of dimensions of the operand, got "
                f"indices {tuple(values)} for operand shape {x.shape}."
            )
    if strides is not None and len(strides) != rank:
        raise ShapeError(
            f"slice strides must have length equal to the number of dimensions of the operand, got "
            f"strides {tuple(strides)} for operand shape {x.shape}."
        )
    if any(b > n for b, n in zip(limit, x.shape, strict=True)):
        raise ShapeError(
            f"slice limit_indices must be less than or equal to operand shape, got limit_indices "
            f"{tuple(limit)} for operand shape {x.shape}."
        )
    if any(a < 0 for a in start):
        raise ShapeError(
            f"slice start_indices must be greater than or equal to zero, got start_indices {tuple(start)}."
        )
    if any(b < a for a, b in zip(start, limit, strict=True)):
        raise ShapeError(
            f"slice limit_indices must be greater than or equal to start_indices, got start_indices "
            f"{tuple(start)} and limit_indices {tuple(limit)}."
        )
    steps = strides or [1] * rank
    if any(s <= 0 for s in steps):
        raise ShapeError(f"slice strides must be positive, got {tuple(steps)}")
    shape = tuple(-(-(b - a) // s) for a, b, s in zip(start, limit, steps, strict=True))
    check_varying_shape(x, shape, "slicing")
    return result(
        "slice", [x], shape, x.dtype, x.spec, unreduced=x.unreduced, reduced=x.reduced, weak_type=x.weak_type
    )


def dynamic_slice(x: ShardedType, slice_sizes: Sequence[int]) -> ShardedType:
    """`lax.dynamic_slice(x, starts, slice_sizes)` (the starts do not change the type): the
    operand's sharding, if every sharded dimension whose size changes stays divisible."""
    if len(slice_sizes) != x.rank:
        raise ShapeError(
            f"dynamic_slice slice_sizes must have the same length as the operand rank, got slice_sizes "
            f"{tuple(slice_sizes)} for operand shape {x.shape}"
        )
    if any(s > n for s, n in zip(slice_sizes, x.shape, strict=True)):
        raise ShapeError(
            f"slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
            f"{tuple(slice_sizes)} for operand shape {x.shape}."
        )
    if any(s < 0 for s in slice_sizes):
        raise ShapeError(
            f"slice slice_sizes must be greater than or equal to zero, got slice_sizes of {tuple(slice_sizes)}."
        )
    shape = tuple(slice_sizes)
    check_varying_shape(x, shape, "dynamic_slice")
    not_implemented_for_unreduced("dynamic_slice", x, reduced_too=False)
    return result("dynamic_slice", [x], shape, x.dtype, x.spec, reduced=x.reduced, weak_type=x.weak_type)


@dataclass
class _GatherPlan:
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


def _plan(x: ShardedType, entries: list[_Entry]) -> _GatherPlan:
    """`_index_to_gather`, step for step, keeping shapes and specs only."""
    group = _advanced(entries)
    group_shape, group_spec = _group_type(x, group)
    group_at = _group_position(entries, group)
    plan = _GatherPlan([], [], [], [], [], (), (), [])
    indices_shape: list[int] = []
    pieces: list[tuple[int, SpecAxes]] = []
    """Where each piece of the gather indices starts, and its spec (each is broadcast to the
    indices' shape, then all are concatenated)."""
    y_axis = 0
    for pos, e in enumerate(entries):
        if group and pos == group_at:
            pieces.extend((len(indices_shape), group_spec) for _ in group)
            indices_shape.extend(group_shape)
            for target in (plan.out_shape, plan.slice_shape):
                target.extend(group_shape)
            for spec_target in (plan.out_spec, plan.slice_spec):
                spec_target.extend(group_spec)
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
        if _is_scalar(e.index):
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


def _advanced(entries: list[_Entry]) -> list[_Entry]:
    """NumPy's advanced indices: with an integer array among them, every integer index too."""
    if not any(isinstance(e.index, ShardedType) and e.index.rank for e in entries):
        return []
    return [
        e for e in entries if e.dim is not None and (_is_scalar(e.index) or isinstance(e.index, ShardedType))
    ]


def _group_position(entries: list[_Entry], group: list[_Entry]) -> int:
    """The advanced group goes where it stands when its entries are next to each other in the
    index as written (`...` not yet expanded), else first."""
    if not group:
        return 0
    written = [e.written for e in group]
    contiguous = all(b - a == 1 for a, b in zip(written, written[1:], strict=False))
    return entries.index(group[0]) if contiguous else 0


def _group_type(x: ShardedType, group: list[_Entry]) -> tuple[tuple[int, ...], SpecAxes]:
    """`util._broadcast_arrays` of the advanced indices: one shape and one sharding for all."""
    if not group:
        return (), ()
    arrays = [
        e.index if isinstance(e.index, ShardedType) else ShardedType((), INT32, x.mesh, ()) for e in group
    ]
    shape = _broadcast([a.shape for a in arrays])
    _, spec = broadcast_shardings(arrays)
    _check_unique(x, spec)
    return shape, spec


def _check_pieces(x: ShardedType, pieces: list[SpecAxes], shape: list[int]) -> None:
    """The gather indices are one `lax.concatenate` of the pieces broadcast to one shape: a
    sharded advanced group beside any other piece (a slice's start, a scalar index) is refused."""
    if len(set(pieces)) > 1:
        same_sharding([ShardedType((*shape, 1), x.dtype, x.mesh, p + ((),)) for p in pieces])


def _gather(x: ShardedType, entries: list[_Entry], out_sharding: PartitionSpec | None) -> ShardedType:
    """`_gather`: `lax.gather` of the operand by the index arrays, then `rev` and `expand_dims`;
    an empty result is a `full_like` with the expected slice sharding, and no gather."""
    plan = _plan(x, entries)
    shape = tuple(plan.slice_shape)
    slice_spec = tuple(plan.slice_spec)
    if out_sharding is None:
        # Under `auto_axes` (out_sharding given) no axis is Explicit, so nothing can repeat.
        _check_unique(x, slice_spec)
    gathers = 0 not in shape and plan.indices_shape[-1] > 0
    if gathers:
        _check_slice_sizes(x, plan)
    if out_sharding is not None:
        # `auto_axes`: the gather runs with every Explicit axis made Auto, then the result takes
        # `out_sharding`.
        return typed_out_sharding(x.mesh, out_sharding, shape, x.dtype)
    if 0 in shape:
        return result("full_like", [x], shape, x.dtype, slice_spec, weak_type=x.weak_type)
    not_implemented_for_unreduced("gather", x, reduced_too=False)
    y = _gather_rule(x, plan) if gathers else x
    return expand_dims(y, plan.newaxis) if plan.newaxis else y


def _check_slice_sizes(x: ShardedType, plan: _GatherPlan) -> None:
    """The gather's shape rule: no slice larger than its dimension (an index into an empty one)."""
    for d, size in plan.taken_dims:
        if size > x.shape[d]:
            raise ShapeError(
                f"Slice size at index {d} in gather op is out of range, must be within "
                f"[0, {x.shape[d]} + 1), got {size}."
            )


def _check_unique(x: ShardedType, spec: SpecAxes) -> None:
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


def _gather_rule(x: ShardedType, plan: _GatherPlan) -> ShardedType:
    """`_gather_sharding_rule`: every dimension indexed into is taken whole or unsharded, and the
    index array is replicated; otherwise JAX asks for `out_sharding`."""
    whole_or_unsharded = all(size == x.shape[d] or not x.spec[d] for d, size in plan.taken_dims)
    indices_replicated = not any(plan.indices_spec)
    if not (whole_or_unsharded and indices_replicated) and (any(x.spec) or any(plan.indices_spec)):
        operand = format_type(x.dtype.name, x.shape, x.spec, x.mesh, x.unreduced, x.reduced)
        indices = format_type("int32", plan.indices_shape, plan.indices_spec, x.mesh)
        raise reject(
            "SH308",
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather indexing "
            "as out sharding could not be resolved unambiguously (or would require collectives on "
            f"inputs). Got operand=ShapedArray({operand}), indices=ShapedArray({indices})",
            SHARDING_TYPE_ERROR,
            operation="gather",
        )
    return result("gather", [x], tuple(plan.out_shape), x.dtype, tuple(plan.out_spec), weak_type=x.weak_type)
