"""What JAX rejects (or warns about) in a PartitionSpec on a mesh apart from divisibility: the
checks of `P(...)` and `NamedSharding(...)` themselves, of the context the sharding is used in,
of the array's rank, and of the axes `with_sharding_constraint` may name. `compute_layout`
reports them in JAX's order.
"""

from __future__ import annotations

import difflib

from shardls.core.context import UsageContext
from shardls.core.mesh import AxisType, Mesh
from shardls.core.problems import Problem, Severity
from shardls.core.spec import UNCONSTRAINED, AxisItem, PartitionSpec, entry_axes


def unresolved_mesh(mesh: Mesh) -> list[Problem]:
    """A `-1` size left unresolved: no layout until the device count is known (SH106)."""
    return [
        Problem(
            "SH106",
            Severity.ERROR,
            f"the mesh {mesh.describe()} has a -1 size that needs a device count to resolve",
            {},
        )
    ]


CONSTRUCTION_CODES = frozenset({"SH004", "SH005", "SH006", "SH009", "SH010"})
"""The problems `check_construction` finds: JAX raises them where the sharding is built, before
any array meets it."""


def check_construction(mesh: Mesh, spec: PartitionSpec, problems: list[Problem]) -> None:
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


def check_context(mesh: Mesh, spec: PartitionSpec, context: UsageContext, problems: list[Problem]) -> None:
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


def check_rank(
    mesh: Mesh, spec: PartitionSpec, rank: int, context: UsageContext, problems: list[Problem]
) -> None:
    """A spec longer than the rank: an error everywhere but `shard_shape`, which tolerates extra
    entries that shard nothing (None, or only size-1 axes) and raises IndexError otherwise, and
    `reshard`/`out_sharding=`, which drop extra None entries (JAX 0.10: `reshard(jnp.zeros(8),
    P(None, None))` is `P(None,)`, on Explicit and Auto meshes; an extra axis, even of size 1,
    raises)."""
    if len(spec.entries) <= rank:
        return
    extra = spec.entries[rank:]
    if context is UsageContext.RESHARD and all(e is None for e in extra):
        return
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


def extra_entries_typed_away(mesh: Mesh, spec: PartitionSpec, rank: int) -> bool:
    """Whether every entry past `rank` names no Explicit axis, so device_put's typing trims it."""
    return not any(
        mesh.types_by_name.get(axis) is AxisType.EXPLICIT
        for entry in spec.entries[rank:]
        for axis in entry_axes(entry)
        if isinstance(axis, str)
    )


def constraint_axis_problems(mesh: Mesh, spec: PartitionSpec, context: UsageContext) -> list[Problem]:
    """`with_sharding_constraint` names only Auto axes, unless every axis is Explicit (then SH013)."""
    if context not in (UsageContext.WSC, UsageContext.WSC_EAGER) or _all_explicit(mesh):
        return []
    problems = []
    for axis in dict.fromkeys(spec.used_axes()):
        kind = mesh.types_by_name.get(axis, AxisType.AUTO) if isinstance(axis, str) else AxisType.AUTO
        if kind is not AxisType.AUTO:
            problems.append(
                Problem(
                    "SH014",
                    Severity.ERROR,
                    f"with_sharding_constraint can only name Auto axes, but {axis!r} is {kind.value}"
                    f"{_CONSTRAINT_HINTS[kind]}",
                    {"axis": axis, "axis_type": kind.value},
                )
            )
    return problems


_CONSTRAINT_HINTS = {
    AxisType.EXPLICIT: "; use jax.sharding.reshard for Explicit axes",
    AxisType.MANUAL: " (a shard_map body's block is already split along it); leave it out of the spec",
}
"""What to do instead, by the type of the axis named: the fix differs, though JAX's error does not."""


def _all_explicit(mesh: Mesh) -> bool:
    return bool(mesh.axis_types) and all(t is AxisType.EXPLICIT for t in mesh.axis_types)
