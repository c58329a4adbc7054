"""A layout as the lines a person reads: what it is, what each device holds, what is wrong."""

from __future__ import annotations

from collections.abc import Sequence

from shardls.core.layout import Layout
from shardls.core.mesh import Mesh
from shardls.core.problems import Problem
from shardls.core.rules import CORE_RULES
from shardls.core.spec import PartitionSpec
from shardls.render.grid import device_grid
from shardls.render.units import human_bytes


def mesh_text(mesh: Mesh) -> str:
    """`data=2, model=4 (8 devices, Auto axes)`, or each axis's type when they differ."""
    types = {t.value for t in mesh.axis_types}
    kinds = (
        f", {types.pop()} axes"
        if len(types) == 1
        else "; axis types "
        + ", ".join(f"{n}: {t.value}" for n, t in zip(mesh.axis_names, mesh.axis_types, strict=True))
    )
    return f"{mesh.describe()} ({_devices(mesh.size)}{kinds})"


def _devices(count: int) -> str:
    return f"{count:,} device{'' if count == 1 else 's'}"


def spec_text(spec: PartitionSpec) -> str:
    """What the user wrote, followed by JAX's canonical form when that reads differently."""
    canonical = spec.canonical()
    original = spec.display()
    same = original.replace(" ", "").replace('"', "'") == canonical.replace(" ", "")
    return original if same else f"{original}  = {canonical}"


def summary_lines(layout: Layout) -> list[str]:
    """Mesh, spec, the global and per-device types, distinct shards × copies, and memory."""
    dtype = layout.dtype
    context = layout.context
    lines = [
        f"mesh        {mesh_text(layout.mesh)}",
        f"spec        {spec_text(layout.spec)}",
        f"used in     {context.value}" + ("" if context.label == context.value else f" ({context.label})"),
        f"global      {layout.jax_type}  {human_bytes(layout.global_bytes)}",
    ]
    if dtype.requested:
        lines.append(f"            {dtype.requested} is {dtype.name} in JAX unless x64 is enabled")
    per_device, total = layout.bytes_per_device, layout.total_bytes
    if per_device is None or total is None:
        return [*lines, "per device  none: JAX rejects this layout (see the problems below)"]
    return [
        *lines,
        f"per device  {layout.per_device_type}"
        + ("  (padded: the shards are uneven)" if layout.padded else ""),
        f"shards      {layout.num_distinct_shards:,} distinct × {layout.copies:,} "
        + ("copy" if layout.copies == 1 else "copies"),
        f"memory      {human_bytes(per_device)} per device",
        f"            {human_bytes(total)} over all {_devices(layout.mesh.size)}",
    ]


def rule_name(code: str) -> str | None:
    """`indivisible-dimension` for `SH001`; None for a code outside the core catalogue."""
    rule = CORE_RULES.get(code)
    return rule.name if rule else None


def problem_line(problem: Problem) -> str:
    """`error SH001 indivisible-dimension: <message>`."""
    name = rule_name(problem.code)
    return f"{problem.severity.value} {problem.code}{f' {name}' if name else ''}: {problem.message}"


def layout_text(layout: Layout, mesh_problems: Sequence[Problem] = (), width: int = 100) -> str:
    """The whole report: summary, the device grid for meshes up to MAX_GRID_DEVICES, then problems.

    `mesh_problems` come from resolving the mesh (device counts), which the layout cannot know.
    """
    sections = ["\n".join(summary_lines(layout))]
    if layout.is_valid:
        sections.append(device_grid(layout, width))
    sections.append(problems_text([*mesh_problems, *layout.problems]))
    return "\n\n".join(sections) + "\n"


def problems_text(problems: Sequence[Problem]) -> str:
    """One `problem_line` each, or `no problems` so that silence is never ambiguous."""
    return "\n".join(map(problem_line, problems)) if problems else "no problems"
