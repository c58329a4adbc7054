"""The calculator: (mesh, spec, global shape, dtype, usage context) -> Layout.

This is the hot path of every hover and diagnostic, so it does the minimum eagerly (shard shape,
counts, problems) and leaves per-device blocks to `Layout.device_blocks()`, which large meshes
(thousands of devices) should only call when a rendering asks for them.
"""

from __future__ import annotations

import difflib
import itertools
import math
from collections.abc import Collection
from dataclasses import dataclass

from shardls.core.context import UsageContext
from shardls.core.dtypes import FLOAT32, DType
from shardls.core.mesh import AxisType, Mesh, resolve_mesh
from shardls.core.problems import Problem, Severity
from shardls.core.spec import UNCONSTRAINED, AxisItem, PartitionSpec, entry_axes


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
        problems.extend(resolve_mesh(mesh, None)[1] or _unresolved_mesh(mesh))
    _check_construction(mesh, spec, problems)
    _check_context(mesh, spec, context, problems)
    rank_problems: list[Problem] = []
    _check_rank(mesh, spec, rank, context, rank_problems)

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
                divisibility.append((_padded(mesh, global_shape, dim, dim_axes[dim], factor, context), False))
            else:
                explicit = math.prod(
                    max(sizes[a], 1) for a in dim_axes[dim] if mesh.types_by_name.get(a) is AxisType.EXPLICIT
                )
                divisibility.append(
                    (_indivisible(mesh, global_shape, dim, dim_axes, factor), n % explicit != 0)
                )
        shard.append(quotient)

    if context is UsageContext.DEVICE_PUT and rank_problems and _extra_entries_typed_away(mesh, spec, rank):
        # device_put first gives the value its type: that drops the spec's Auto axes and the
        # trailing Nones this leaves, then checks divisibility by the Explicit axes, and only then
        # the rank (jax._src.core.get_sharding, before pjit_check_aval_sharding).
        problems += [p for p, typed in divisibility if typed]
        problems += rank_problems
        problems += [p for p, typed in divisibility if not typed]
    else:
        problems += rank_problems
        problems += _constraint_axis_problems(mesh, spec, context)
        problems += [p for p, _ in divisibility]

    valid = not any(p.severity is Severity.ERROR for p in problems)
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


def _unresolved_mesh(mesh: Mesh) -> list[Problem]:
    return [
        Problem(
            "SH106",
            Severity.ERROR,
            f"the mesh {mesh.describe()} has a -1 size that needs a device count to resolve",
            {},
        )
    ]


def _check_construction(mesh: Mesh, spec: PartitionSpec, problems: list[Problem]) -> None:
    """What `P(...)` and `NamedSharding(...)` reject before any shape is known, in JAX's order."""
    sizes = mesh.sizes_by_name
    used = spec.used_axes()
    # `P(...)` itself rejects an axis that is both unreduced and reduced, then one that is both a
    # partition and unreduced/reduced.
    for name in sorted(spec.unreduced & spec.reduced):
        problems.append(
            Problem(
                "SH010",
                Severity.ERROR,
                f"mesh axis {name!r} is both unreduced and reduced in {spec.display()}",
                {"axis": name},
            )
        )
    overlap = (spec.unreduced | spec.reduced) & {a for a in used if isinstance(a, str)}
    for name in sorted(overlap):
        problems.append(
            Problem(
                "SH010",
                Severity.ERROR,
                f"mesh axis {name!r} is both a partition of {spec.display()} and unreduced/reduced",
                {"axis": name},
            )
        )
    # JAX counts every item of every non-None entry, so a None (or P.UNCONSTRAINED) written twice
    # inside tuples is a duplicate too, and duplicates are reported before unknown names.
    seen: set[AxisItem] = set()
    reported: set[AxisItem] = set()
    for axis in used:
        if axis in seen and axis not in reported:
            reported.add(axis)
            what = f"mesh axis {axis!r}" if isinstance(axis, str) else f"{_item_text(axis)} (inside tuples)"
            problems.append(
                Problem(
                    "SH004",
                    Severity.ERROR,
                    f"{what} is used more than once in {spec.display()}; "
                    "each mesh axis can split at most one dimension",
                    {"axis": axis if isinstance(axis, str) else None},
                )
            )
        seen.add(axis)
    for axis in dict.fromkeys(used):
        if not isinstance(axis, str):
            problems.append(
                Problem(
                    "SH005",
                    Severity.ERROR,
                    f"{_item_text(axis)} inside a tuple entry of {spec.display()} is not a mesh axis; "
                    "leave it out (or write it as the whole entry)",
                    {"axis": None, "suggestion": None},
                )
            )
        elif axis not in sizes:
            problems.append(_unknown_axis(mesh, spec, axis))
    if UNCONSTRAINED in spec.entries and not mesh.has_auto_axis:
        problems.append(
            Problem(
                "SH006",
                Severity.ERROR,
                f"P.UNCONSTRAINED needs an Auto mesh axis, but every axis of ({mesh.describe()}) is "
                + "/".join(sorted({t.value for t in mesh.axis_types})),
                {},
            )
        )
    for kind, axes in (("unreduced", spec.unreduced), ("reduced", spec.reduced)):
        for axis in sorted(axes):
            if axis not in sizes:
                problems.append(
                    Problem(
                        "SH009",
                        Severity.ERROR,
                        f"{kind} axis {axis!r} is not an axis of the mesh ({mesh.describe()})",
                        {"axis": axis},
                    )
                )
            elif mesh.types_by_name[axis] is not AxisType.EXPLICIT:
                problems.append(
                    Problem(
                        "SH009",
                        Severity.ERROR,
                        f"{kind} axis {axis!r} is {mesh.types_by_name[axis].value}; "
                        f"{kind} axes must be Explicit",
                        {"axis": axis},
                    )
                )


def _item_text(item: object) -> str:
    return "P.UNCONSTRAINED" if item is UNCONSTRAINED else repr(item)


def _unknown_axis(mesh: Mesh, spec: PartitionSpec, axis: str) -> Problem:
    suggestions = difflib.get_close_matches(axis, mesh.axis_names, n=1, cutoff=0.5)
    hint = f"; did you mean {suggestions[0]!r}?" if suggestions else ""
    return Problem(
        "SH005",
        Severity.ERROR,
        f"{axis!r} in {spec.display()} is not an axis of the mesh ({mesh.describe()}){hint}",
        {"axis": axis, "suggestion": suggestions[0] if suggestions else None},
    )


def _check_context(mesh: Mesh, spec: PartitionSpec, context: UsageContext, problems: list[Problem]) -> None:
    """Rules that depend on where the sharding is used rather than on the shape."""
    if UNCONSTRAINED in spec.entries and context in (
        UsageContext.DEVICE_PUT,
        UsageContext.JIT,
        UsageContext.SHARD_MAP,
        UsageContext.RESHARD,
    ):
        how = "fails with KeyError: UNCONSTRAINED" if context is UsageContext.DEVICE_PUT else "rejects it"
        problems.append(
            Problem(
                "SH008",
                Severity.ERROR,
                f"P.UNCONSTRAINED only has a meaning in with_sharding_constraint; {context.label} {how}",
                {"context": context.value},
            )
        )
    if context is UsageContext.RESHARD:
        for axis in dict.fromkeys(spec.used_axes()):
            if axis is not None and mesh.types_by_name.get(axis, AxisType.EXPLICIT) is not AxisType.EXPLICIT:
                problems.append(
                    Problem(
                        "SH011",
                        Severity.ERROR,
                        f"reshard and out_sharding= need Explicit axes, but {axis!r} is "
                        f"{mesh.types_by_name[axis].value}; on Auto axes use with_sharding_constraint",
                        {"axis": axis},
                    )
                )
    if context is UsageContext.PARAM and len(set(mesh.axis_types)) > 1:
        mixed = ", ".join(f"{n}: {t.value}" for n, t in zip(mesh.axis_names, mesh.axis_types, strict=False))
        problems.append(
            Problem(
                "SH012",
                Severity.ERROR,
                "Flax shards parameters only on meshes whose axes are all Auto or all Explicit; "
                f"this mesh mixes {mixed}",
                {},
            )
        )
    if context in (UsageContext.WSC, UsageContext.WSC_EAGER) and _all_explicit(mesh):
        problems.append(
            Problem(
                "SH013",
                Severity.WARNING,
                "with_sharding_constraint on a mesh whose axes are all Explicit only asserts under "
                "jax.set_mesh (an AssertionError if the array is sharded differently), and outside "
                "it a spec that names an axis is a ValueError; use jax.sharding.reshard",
                {},
            )
        )


def _check_rank(
    mesh: Mesh, spec: PartitionSpec, rank: int, context: UsageContext, problems: list[Problem]
) -> None:
    """A spec longer than the rank: an error everywhere but `shard_shape`, which tolerates extra
    entries that shard nothing (None, or only size-1 axes) and raises IndexError otherwise."""
    if len(spec.entries) <= rank:
        return
    extra = spec.entries[rank:]
    real_axes = [
        a for e in extra for a in entry_axes(e) if a is not None and mesh.sizes_by_name.get(a, 2) != 1
    ]
    # shard_shape alone tolerates extra entries that shard nothing; every other use rejects them.
    severity = Severity.WARNING if context is UsageContext.SHARD_SHAPE and not real_axes else Severity.ERROR
    tolerated = (
        "; shard_shape ignores it, but device_put, jit and with_sharding_constraint reject it"
        if severity is Severity.WARNING
        else ""
    )
    data = {"spec_length": len(spec.entries), "rank": rank}
    if rank == 0 and all(e is None for e in extra):
        problems.append(
            Problem(
                "SH003",
                severity,
                f"{spec.display()} on a scalar: a scalar has no dimension to leave unsharded; "
                f"write P(){tolerated}",
                data,
            )
        )
        return
    problems.append(
        Problem(
            "SH002",
            severity,
            f"{spec.display()} has {len(spec.entries)} entries but the array has rank {rank}{tolerated}",
            data,
        )
    )


def _extra_entries_typed_away(mesh: Mesh, spec: PartitionSpec, rank: int) -> bool:
    """Whether every entry past `rank` names no Explicit axis, so device_put's typing trims it."""
    return not any(
        mesh.types_by_name.get(axis) is AxisType.EXPLICIT
        for entry in spec.entries[rank:]
        for axis in entry_axes(entry)
        if isinstance(axis, str)
    )


def _constraint_axis_problems(mesh: Mesh, spec: PartitionSpec, context: UsageContext) -> list[Problem]:
    """`with_sharding_constraint` names only Auto axes, unless every axis is Explicit (then SH013)."""
    if context not in (UsageContext.WSC, UsageContext.WSC_EAGER) or _all_explicit(mesh):
        return []
    problems = []
    for axis in dict.fromkeys(spec.used_axes()):
        if isinstance(axis, str) and mesh.types_by_name.get(axis, AxisType.AUTO) is not AxisType.AUTO:
            problems.append(
                Problem(
                    "SH014",
                    Severity.ERROR,
                    f"with_sharding_constraint can only name Auto axes, but {axis!r} is "
                    f"{mesh.types_by_name[axis].value}; use jax.sharding.reshard for Explicit axes",
                    {"axis": axis},
                )
            )
    return problems


def _all_explicit(mesh: Mesh) -> bool:
    return bool(mesh.axis_types) and all(t is AxisType.EXPLICIT for t in mesh.axis_types)


def _dims_text(global_shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, global_shape)) + "]"


def _axes_text(mesh: Mesh, axes: tuple[str, ...]) -> str:
    if len(axes) == 1:
        return f"mesh axis {axes[0]!r} of size {mesh.sizes_by_name[axes[0]]}"
    product = "×".join(str(mesh.sizes_by_name[a]) for a in axes)
    return f"mesh axes ({', '.join(repr(a) for a in axes)}) of size {product}"


def _indivisible(
    mesh: Mesh,
    global_shape: tuple[int, ...],
    dim: int,
    dim_axes: list[tuple[str, ...]],
    factor: int,
) -> Problem:
    n = global_shape[dim]
    axes = dim_axes[dim]
    lower, upper = (n // factor) * factor, -(-n // factor) * factor
    nearest = [size for size in (lower, upper) if size > 0]
    other_used = {a for d, other in enumerate(dim_axes) if d != dim for a in other}
    alternatives = dividing_axis_choices(mesh, n, exclude=other_used)
    return Problem(
        "SH001",
        Severity.ERROR,
        f"dimension {dim} of {_dims_text(global_shape)} has size {n}, which {_axes_text(mesh, axes)} "
        f"({factor} ways) does not divide; the nearest sizes that divide are "
        + " and ".join(map(str, nearest)),
        {
            "dim": dim,
            "size": n,
            "factor": factor,
            "axes": list(axes),
            "nearest": nearest,
            "alternatives": [list(a) for a in alternatives],
        },
    )


def _padded(
    mesh: Mesh,
    global_shape: tuple[int, ...],
    dim: int,
    axes: tuple[str, ...],
    factor: int,
    context: UsageContext,
) -> Problem:
    n = global_shape[dim]
    block = -(-n // factor)
    where, result = (
        ("inside jit", "the jit output")
        if context is UsageContext.WSC
        else ("in the compiled constraint (the spec has P.UNCONSTRAINED)", "the result")
    )
    return Problem(
        "SH007",
        Severity.WARNING,
        f"dimension {dim} of {_dims_text(global_shape)} has size {n}, which {_axes_text(mesh, axes)} "
        f"does not divide; {where} XLA pads every shard to {block} ({block * factor - n} padding "
        f"elements in all), and {result} may come back replicated",
        {"dim": dim, "size": n, "factor": factor, "axes": list(axes), "padded_block": block},
    )


def dividing_axis_choices(mesh: Mesh, n: int, exclude: Collection[str] = ()) -> list[tuple[str, ...]]:
    """Mesh axes (single, then ordered pairs) that evenly split a dimension of size n, most ways first.

    Quick fixes offer these; an empty tuple (replicate) always divides and is not listed.
    """
    # Axes with a size only: a malformed mesh (fewer sizes than names) can name more.
    free = [a for a in mesh.sizes_by_name if a not in exclude and mesh.sizes_by_name[a] > 1]
    choices: list[tuple[str, ...]] = [(a,) for a in free]
    choices += list(itertools.combinations(free, 2))
    fitting = [c for c in choices if n % math.prod(mesh.sizes_by_name[a] for a in c) == 0]
    return sorted(fitting, key=lambda c: -math.prod(mesh.sizes_by_name[a] for a in c))
