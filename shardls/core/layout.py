"""The calculator: (mesh, spec, global shape, dtype, usage context) -> Layout.

This is the hot path of every hover and diagnostic, so it does the minimum eagerly (shard shape,
counts, problems) and leaves per-device blocks to `Layout.device_blocks()`, which large meshes
(thousands of devices) should only call when a rendering asks for them.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from shardls.core.context import UsageContext
from shardls.core.divisibility import accepted_in_abstract, indivisible_problem, padding_problem
from shardls.core.dtypes import FLOAT32, DType
from shardls.core.mesh import AxisType, Mesh, resolve_mesh
from shardls.core.problems import Problem, Severity
from shardls.core.spec import UNCONSTRAINED, PartitionSpec, entry_axes
from shardls.core.spec_checks import (
    check_construction,
    check_context,
    check_rank,
    constraint_axis_problems,
    extra_entries_typed_away,
    unresolved_mesh,
)


@dataclass(frozen=True)
class DeviceBlock:
    """The block of the global array one device holds.

    `index[d]` is `(start, stop)` along dimension d, or None when the dimension is not split
    (JAX's `slice(None)`).
    """

    device_id: int
    coords: tuple[int, ...]
    index: tuple[tuple[int, int] | None, ...]
    replica_id: int


@dataclass(frozen=True)
class Layout:
    mesh: Mesh
    spec: PartitionSpec
    global_shape: tuple[int, ...]
    dtype: DType
    context: UsageContext
    dim_axes: tuple[tuple[str, ...], ...]
    """Per dimension, the known mesh axes it is split over (size-1 axes included)."""
    dim_factors: tuple[int, ...]
    """Per dimension, how many ways it is split."""
    shard_shape: tuple[int, ...] | None
    """Per-device shape; padded when `padded`; None when JAX rejects the layout."""
    padded: bool
    problems: tuple[Problem, ...]

    @property
    def is_valid(self) -> bool:
        return self.shard_shape is not None

    @property
    def num_distinct_shards(self) -> int:
        """Distinct blocks; dimensions of size 0 give identical (empty) blocks on every device."""
        return math.prod(f for f, n in zip(self.dim_factors, self.global_shape, strict=True) if n > 0)

    @property
    def copies(self) -> int:
        """How many devices hold each distinct block."""
        return self.mesh.size // self.num_distinct_shards

    @property
    def bytes_per_device(self) -> int | None:
        if self.shard_shape is None:
            return None
        return self.dtype.bytes_for(math.prod(self.shard_shape))

    @property
    def total_bytes(self) -> int | None:
        """Bytes over all devices of the mesh (replicas count once per device)."""
        per_device = self.bytes_per_device
        return None if per_device is None else per_device * self.mesh.size

    @property
    def global_bytes(self) -> int:
        return self.dtype.bytes_for(math.prod(self.global_shape))

    @property
    def jax_type(self) -> str:
        """JAX's sharding-in-types notation, e.g. `bfloat16[4096@(data,model),512]`."""
        dims = []
        for n, axes in zip(self.global_shape, self.dim_axes, strict=True):
            if not axes:
                dims.append(str(n))
            elif len(axes) == 1:
                dims.append(f"{n}@{axes[0]}")
            else:
                dims.append(f"{n}@({','.join(axes)})")
        return f"{self.dtype.name}[{','.join(dims)}]"

    @property
    def per_device_type(self) -> str | None:
        if self.shard_shape is None:
            return None
        return f"{self.dtype.name}[{','.join(map(str, self.shard_shape))}]"

    def device_blocks(self) -> list[DeviceBlock]:
        """One block per mesh coordinate, in row-major mesh order (the order of `mesh.devices.flat`).

        `replica_id` is JAX's `Shard.replica_id`: the row-major index of the device over the mesh
        axes that do not split a non-empty dimension, so it runs from 0 to `copies - 1`.
        """
        mesh = self.mesh
        # JAX numbers replicas by counting devices (in mesh order) that hold an identical index, so
        # an axis that only splits a zero-size dimension (every block (0, 0)) counts as unused.
        used = {axis for axes, n in zip(self.dim_axes, self.global_shape, strict=True) if n for axis in axes}
        unused = [i for i, name in enumerate(mesh.axis_names) if name not in used]
        ranges = self.dimension_ranges()
        blocks = []
        for flat, coords in enumerate(itertools.product(*(range(s) for s in mesh.axis_sizes))):
            index = tuple(None if along is None else along[flat] for along in ranges)
            replica = 0
            for i in unused:
                replica = replica * mesh.axis_sizes[i] + coords[i]
            blocks.append(DeviceBlock(mesh.device_id(flat), coords, index, replica))
        return blocks

    def dimension_ranges(self) -> tuple[tuple[tuple[int, int], ...] | None, ...]:
        """Per dimension, the `(start, stop)` of every device's block along it, in mesh order; None
        where the dimension is not split. `device_blocks()` reads its indices from here; callers
        that need only the ranges (data movement, on meshes of thousands of devices) skip building
        a block per device."""
        mesh = self.mesh
        count = mesh.size
        position = {name: i for i, name in enumerate(mesh.axis_names)}
        ranges: list[tuple[tuple[int, int], ...] | None] = []
        for n, f, axes in zip(self.global_shape, self.dim_factors, self.dim_axes, strict=True):
            if f == 1:
                ranges.append(None)
                continue
            numbers = [0] * count
            for axis in axes:
                i = position[axis]
                stride, coordinates = math.prod(mesh.axis_sizes[i + 1 :]), mesh.axis_sizes[i]
                factor = mesh.sizes_by_name[axis]
                numbers = [b * factor + flat // stride % coordinates for flat, b in enumerate(numbers)]
            size = -(-n // f)
            blocks = [(min(b * size, n), min((b + 1) * size, n)) for b in range(f)]
            ranges.append(tuple(blocks[b] for b in numbers))
        return tuple(ranges)


_MEMO: dict[tuple[int, int, tuple[int, ...], int, UsageContext], Layout] = {}
_MEMO_SIZE = 65_536
_CHECKED_CONTEXTS = frozenset(
    {UsageContext.WSC, UsageContext.WSC_EAGER, UsageContext.RESHARD, UsageContext.PARAM}
)
"""Contexts with rules of their own about axis types: they always take the full path."""


def compute_layout(
    mesh: Mesh,
    spec: PartitionSpec,
    global_shape: tuple[int, ...],
    dtype: DType = FLOAT32,
    context: UsageContext = UsageContext.DEVICE_PUT,
) -> Layout:
    """Lay `global_shape` out on `mesh` by `spec` as JAX would in `context`, with every problem.

    The mesh must have its sizes resolved (see `resolve_mesh`); an unresolved or malformed mesh
    yields its own problems and no shard shape. Results are memoized (layouts are immutable and
    editors ask the same questions again on every keystroke), and the common case of a valid
    layout takes a fast path that skips every check that cannot fail.
    """
    # Keyed by identity: a hit needs no hashing or comparing of meshes and specs. An entry keeps
    # its mesh, spec and dtype alive (the Layout refers to them), so their ids cannot be reused.
    key = (id(mesh), id(spec), global_shape, id(dtype), context)
    found = _MEMO.get(key)
    if found is None:
        found = _valid_layout(mesh, spec, global_shape, dtype, context) or _full_layout(
            mesh, spec, global_shape, dtype, context
        )
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.clear()
        _MEMO[key] = found
    return found


def _valid_layout(
    mesh: Mesh,
    spec: PartitionSpec,
    global_shape: tuple[int, ...],
    dtype: DType,
    context: UsageContext,
) -> Layout | None:
    """The layout when nothing can be wrong with it, else None (then `_full_layout` explains why)."""
    if not (mesh.well_formed and spec.plain) or context in _CHECKED_CONTEXTS:
        return None
    names = spec.entry_names
    if len(names) > len(global_shape):
        return None
    sizes = mesh.sizes_by_name
    dim_axes: list[tuple[str, ...]] = []
    factors: list[int] = []
    shard: list[int] = []
    for dim, n in enumerate(global_shape):
        axes = names[dim] if dim < len(names) else ()
        factor = 1
        for axis in axes:
            size = sizes.get(axis)
            if size is None:
                return None
            factor *= size
        quotient, remainder = divmod(n, factor)
        if remainder:
            return None
        dim_axes.append(axes)
        factors.append(factor)
        shard.append(quotient)
    return Layout(
        mesh, spec, global_shape, dtype, context, tuple(dim_axes), tuple(factors), tuple(shard), False, ()
    )


def _after_constraint(
    constraint: list[Problem], divisibility: list[tuple[Problem, bool]], dim_axes: list[tuple[str, ...]]
) -> list[Problem]:
    """The divisibility problems still to report once `with_sharding_constraint` is found naming
    axes that are not Auto (`constraint`): JAX rejects those axes before it looks at the shape,
    and leaving them out of the spec (the fix) takes away the problems of the dimensions they
    split, such as a Manual axis of a `shard_map` body over a block it already divides."""
    named = {p.data.get("axis") for p in constraint}
    kept = []
    for problem, _ in divisibility:
        dim = problem.data.get("dim")
        if not (isinstance(dim, int) and named.intersection(dim_axes[dim])):
            kept.append(problem)
    return kept


def _full_layout(
    mesh: Mesh,
    spec: PartitionSpec,
    global_shape: tuple[int, ...],
    dtype: DType,
    context: UsageContext,
) -> Layout:
    sizes = mesh.sizes_by_name
    rank = len(global_shape)
    problems: list[Problem] = []
    if (
        len(sizes) != len(mesh.axis_names)
        or len(mesh.axis_sizes) != len(sizes)
        or len(mesh.axis_types) != len(mesh.axis_names)
        or not mesh.is_resolved
    ):
        problems.extend(resolve_mesh(mesh, None)[1] or unresolved_mesh(mesh))
    check_construction(mesh, spec, problems)
    check_context(mesh, spec, context, problems)
    rank_problems: list[Problem] = []
    check_rank(mesh, spec, rank, context, rank_problems)

    dim_axes: list[tuple[str, ...]] = []
    dim_factors: list[int] = []
    for entry in spec.padded(rank):
        axes = tuple(a for a in entry_axes(entry) if isinstance(a, str) and a in sizes)
        dim_axes.append(axes)
        factor = 1
        for axis in axes:
            factor *= max(sizes[axis], 1)  # a malformed mesh (size < 1) has its own problem
        dim_factors.append(factor)

    # Uneven shards are padded where the constraint is compiled: inside jit, and outside jit when
    # the spec has P.UNCONSTRAINED (then JAX applies the constraint primitive, not a jit with
    # out_shardings, which would raise IndivisibleError).
    pads = context is UsageContext.WSC or (
        context is UsageContext.WSC_EAGER and UNCONSTRAINED in spec.entries
    )
    padded = False
    shard: list[int] = []
    # Per indivisible dimension: its problem, and whether its Explicit axes alone fail to divide it.
    divisibility: list[tuple[Problem, bool]] = []
    for dim, (n, factor) in enumerate(zip(global_shape, dim_factors, strict=True)):
        quotient, remainder = divmod(n, factor)
        if remainder:
            if pads and all(mesh.types_by_name.get(a) is AxisType.AUTO for a in dim_axes[dim]):
                padded = True
                quotient += 1
                divisibility.append(
                    (padding_problem(mesh, global_shape, dim, dim_axes[dim], factor, context), False)
                )
            else:
                explicit = math.prod(
                    max(sizes[a], 1) for a in dim_axes[dim] if mesh.types_by_name.get(a) is AxisType.EXPLICIT
                )
                divisibility.append(
                    (indivisible_problem(mesh, global_shape, dim, dim_axes, factor), n % explicit != 0)
                )
        shard.append(quotient)
    if context is UsageContext.ABSTRACT:
        divisibility = [(accepted_in_abstract(p), typed) for p, typed in divisibility]

    if context is UsageContext.DEVICE_PUT and rank_problems and extra_entries_typed_away(mesh, spec, rank):
        # device_put first gives the value its type: that drops the spec's Auto axes and the
        # trailing Nones this leaves, then checks divisibility by the Explicit axes, and only then
        # the rank (jax._src.core.get_sharding, before pjit_check_aval_sharding).
        problems += [p for p, typed in divisibility if typed]
        problems += rank_problems
        problems += [p for p, typed in divisibility if not typed]
    else:
        constraint = constraint_axis_problems(mesh, spec, context)
        problems += rank_problems
        problems += constraint
        problems += _after_constraint(constraint, divisibility, dim_axes)

    # An uneven struct has no shard shape (JAX's shard_shape raises), though building it is no error.
    valid = not any(p.severity is Severity.ERROR for p in problems) and not (
        context is UsageContext.ABSTRACT and divisibility
    )
    return Layout(
        mesh,
        spec,
        global_shape,
        dtype,
        context,
        tuple(dim_axes),
        tuple(dim_factors),
        tuple(shard) if valid else None,
        padded,
        tuple(problems),
    )
