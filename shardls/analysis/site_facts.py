"""How a site's facts and problems are worded and placed: the fact of a mesh a constructor
builds (resolved with the device count, and what its problems rest on), the mesh chosen and why,
the dimensions and where each came from, what a problem rests on and how to state it, the spec
entry a problem is put on, and where a sharding was built. Pure functions of values, used by
`sites.SiteBuilder`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from shardls.analysis.facts import Dim, MeshFact, Related, Span, SymbolicDim
from shardls.analysis.library.sharding import ONE_PROCESS
from shardls.analysis.values import (
    ArrayV,
    Const,
    MeshV,
    ShardingV,
    SpecV,
    Unknown,
    Value,
    as_int,
    assumption_of,
)
from shardls.analysis.walking.contexts import ASSUMED_UNDER_JIT
from shardls.core import (
    FILL,
    FLOAT32,
    Mesh,
    PartitionSpec,
    Problem,
    UsageContext,
    compute_layout,
    resolve_mesh,
)


def shape_reason(array: Value | None) -> str | None:
    """Why the shape of what a site places is not known, in words a hover can show."""
    if isinstance(array, Unknown):
        return array.reason
    if isinstance(array, ArrayV) and array.shape is None:
        return "an array whose rank the operations that make it do not tell"
    if array is None:
        return "no array is passed here that shardls can follow"
    return None if isinstance(array, ArrayV) else "not an array shardls knows"


def related_places(mesh: MeshFact, foreign_spec: SpecV | None) -> tuple[Related, ...]:
    found = []
    if mesh.span is not None:
        found.append(Related(mesh.span, "mesh defined here", mesh.path))
    if foreign_spec is not None and foreign_spec.span is not None:
        found.append(Related(foreign_spec.span, "the PartitionSpec is written here", foreign_spec.path))
    return tuple(found)


def selected(fact: MeshFact | None, why: str) -> MeshFact | None:
    if fact is None:
        return None
    return replace(fact, selection=why)


def guessed(fact: MeshFact, why: str) -> MeshFact:
    """A mesh the code does not name at this place, picked to show a layout (see `MeshFact.fallback`)."""
    return replace(fact, selection=why, fallback=True)


def fallback_mesh(stated: MeshFact | None, file_meshes: list[MeshFact], line: int) -> MeshFact | None:
    """The mesh for a place where the code names none: one the user stated (pragma, setting),
    else one picked to show a layout (the only mesh of the file, the nearest one above `line`,
    the only one in the workspace), which never decides a problem."""
    if stated is not None and not stated.fallback:
        return stated
    if len(file_meshes) == 1:
        return guessed(file_meshes[0], "the only mesh in this file")
    above = [m for m in file_meshes if m.span is not None and m.span.line <= line]
    if above:
        return guessed(above[-1], f"the nearest mesh above (one of {len(file_meshes)} in this file)")
    if file_meshes:
        return guessed(file_meshes[0], f"the first of {len(file_meshes)} meshes in this file")
    return stated


def spec_notes(spec: SpecV) -> list[str]:
    """What a layout shows about its spec's entries the code does not make known."""
    if not spec.unknown_entries:
        return []
    entries = ", ".join(str(i) for i in spec.unknown_entries)
    return [
        f"spec entr{'y' if len(spec.unknown_entries) == 1 else 'ies'} {entries} unknown; treated as unsharded"
    ]


MESH_STRUCTURE_CODES = frozenset({"SH101", "SH102", "SH103", "SH108", "SH109"})
"""Mesh problems that hold whatever the sizes and the device count are."""


def own_assumptions(problem: Problem) -> tuple[str, ...]:
    """What a mesh constructor's problem rests on itself (a `-1` read from a flag's default)."""
    found = problem.data.get("assumptions")
    return tuple(str(a) for a in found) if isinstance(found, tuple | list) else ()


_HOW_TO_STATE = "state the real values with `# shardls: device-count=N` or `mesh=...`, or in [tool.shardls]"
_HOW_TO_STATE_GLOBAL_SHAPE = "pass `global_shape=` to state the whole array's shape"
_EAGER_INSTEAD = "run eagerly, JAX rejects the dimension instead of padding it"


def how_to_state(basis: Iterable[str]) -> str:
    """The advice that fits what was assumed: a device count or a mesh is stated in a pragma or the
    settings, but a shape taken from one process's local data only by the call's `global_shape=`,
    and a jit only assumed cannot be stated at all: what changes without it is said instead."""
    stated = set(basis) - {ASSUMED_UNDER_JIT}
    advice = [_HOW_TO_STATE_GLOBAL_SHAPE if stated == {ONE_PROCESS} else _HOW_TO_STATE] if stated else []
    if ASSUMED_UNDER_JIT in basis:
        advice.append(_EAGER_INSTEAD)
    return "; ".join(advice)


def shape_assumptions(shape: tuple[Value, ...]) -> list[str]:
    """What the dimensions rest on (a size computed from the default device count, a flag's
    default), each dimension's own: `(args.n, 2**args.power)` rests on both flags."""
    found = (assumption_of(size) for size in shape)
    return list(dict.fromkeys(a for a in found if a is not None))


def constructor_name(mesh: Mesh) -> str:
    return mesh.constructor.value if mesh.constructor else "mesh"


def new_mesh_fact(
    value: MeshV,
    name: str | None,
    path: str,
    device_count: int,
    device_count_note: str | None,
    device_count_default: bool,
) -> tuple[MeshFact, list[tuple[Problem, tuple[str, ...]]]]:
    """The fact of a mesh met for the first time, resolved with the devices it is given (else
    all `device_count` of them), with notes on what was filled from the count and assumed; and
    its problems, each with what it rests on: a problem of the mesh's structure holds whatever
    the count is, any other rests on the count's assumptions too."""
    resolved, checked = resolve_mesh(value.mesh, value.device_count or device_count)
    problems = list(value.problems) + checked
    notes, assumed = [*value.provenance, *value.assumptions], list(value.assumptions)
    counted = f"{device_count} devices" + (f" ({device_count_note})" if device_count_note else "")
    # The count the mesh meets: the devices it was given, else all of them.
    count_assumption = (
        value.count_assumption
        if value.device_count is not None
        else (counted if device_count_default else None)
    )
    if FILL in value.mesh.axis_sizes and resolved.is_resolved:
        filled = [n for n, s in zip(value.mesh.axis_names, value.mesh.axis_sizes) if s == FILL]
        notes.append(f"size of {', '.join(filled)} filled from {counted}")
        if count_assumption is not None:
            assumed.append(notes[-1])
    elif device_count_note and problems:
        notes.append(counted)
    mesh_assumed = tuple(dict.fromkeys(assumed))
    count_assumed = tuple(dict.fromkeys([*assumed, *([count_assumption] if count_assumption else [])]))
    span = value.span
    source = f"{constructor_name(value.mesh)} at line {span.line + 1}" if span else "mesh"
    if value.path and value.path != path and span:
        source = f"{constructor_name(value.mesh)} at {value.path}:{span.line + 1}"
    fact = MeshFact(
        resolved, span, name, source, "", tuple(dict.fromkeys(notes)), value.path, assumed=mesh_assumed
    )
    rested = [
        (p, (*own_assumptions(p), *_rests_on(p, p in checked, mesh_assumed, count_assumed)))
        for p in problems
        if p.code in MESH_STRUCTURE_CODES or not value.runs_elsewhere
    ]
    return fact, rested


def _rests_on(
    problem: Problem, of_sizes: bool, sizes_assumed: tuple[str, ...], count_assumed: tuple[str, ...]
) -> tuple[str, ...]:
    """What a mesh problem rests on beside its own assumptions: nothing for one of the mesh's
    structure, the sizes' assumptions for a size the check of the sizes rejects (`n // 16` of an
    assumed `n` is 0 only on the assumed count), the count's for any other."""
    if problem.code not in MESH_STRUCTURE_CODES:
        return count_assumed
    return sizes_assumed if of_sizes and problem.code == "SH103" else ()


def built_in(sharding: ShardingV | None, path: str) -> Span | None:
    """Where a sharding was built, when the file at `path` built it with `NamedSharding(...)`."""
    if sharding is None or sharding.span is None or sharding.path not in (None, path):
        return None
    return sharding.span


def site_dims(
    shape: tuple[Value, ...] | None, path: str
) -> tuple[tuple[Dim, ...] | None, tuple[str, ...], tuple[int, ...]]:
    if shape is None:
        return None, (), ()
    dims: list[Dim] = []
    provenance: list[str] = []
    symbolic: list[int] = []
    for index, value in enumerate(shape):
        size = as_int(value)
        if size is not None and size >= 0:
            dims.append(size)
            if isinstance(value, Const) and value.origin is not None:
                origin = value.origin if value.origin.path != path else replace(value.origin, path=None)
                provenance.append(f"dim {index} = {size}: {origin.describe()}")
        else:
            name = value.symbol if isinstance(value, Unknown) and value.symbol else f"d{index}"
            dims.append(SymbolicDim(name))
            symbolic.append(index)
            reason = value.reason if isinstance(value, Unknown) else "not a known integer"
            provenance.append(f"dim {index} = {name}: unknown ({reason})")
    return tuple(dims), tuple(provenance), tuple(symbolic)


def names_all(mesh: Mesh, spec: PartitionSpec) -> bool:
    return all(axis in mesh.sizes_by_name for axis in spec.used_axes() if axis is not None)


def symbolic_problem(problem: Problem, symbolic: tuple[int, ...]) -> bool:
    dim = problem.data.get("dim")
    return isinstance(dim, int) and dim in symbolic


def problem_span(problem: Problem, spec: SpecV, spec_span: Span, site_span: Span) -> Span:
    """Put a problem on the spec entry it is about when that entry is visible, else on the spec."""
    dim = problem.data.get("dim")
    if isinstance(dim, int) and dim < len(spec.entry_spans) and spec.entry_spans[dim] is not None:
        found = spec.entry_spans[dim]
        assert found is not None
        return found
    axis = problem.data.get("axis")
    if isinstance(axis, str):
        for index, entry in enumerate(spec.spec.entries):
            names = entry if isinstance(entry, tuple) else (entry,)
            if axis in names and index < len(spec.entry_spans) and spec.entry_spans[index] is not None:
                found = spec.entry_spans[index]
                assert found is not None
                return found
    if problem.code in ("SH002", "SH003"):
        return spec_span
    return spec_span if spec.span is not None else site_span


def spec_only_problems(mesh: Mesh, spec: PartitionSpec, usage: UsageContext) -> list[Problem]:
    """Problems that need no shape (unknown or duplicate axes, UNCONSTRAINED, axis types)."""
    probe = tuple(mesh.size for _ in spec.entries)
    layout = compute_layout(mesh, spec, probe, FLOAT32, usage)
    return [p for p in layout.problems if p.code not in ("SH001", "SH002", "SH003", "SH007")]
