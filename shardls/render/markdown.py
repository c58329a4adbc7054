"""Markdown only the editor shows: hovers built from `site_text`'s lines, a layer's parameter
table and an axis name.

`site_text` writes one line per fact; Markdown would run consecutive lines together into one
paragraph, so `markdown_document` keeps each line on its own (hard line breaks), and keeps
lists, tables and fenced blocks intact.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardls.analysis.facts import Diagnostic, MeshFact, Site
from shardls.render.layout_text import spec_text
from shardls.render.site_text import describe_mesh, global_type, per_device_type
from shardls.render.units import short_bytes

_FENCE = "```"
_HARD_BREAK = "  \n"
"""CommonMark's hard line break; plain-text renderers show it as two harmless spaces."""


def markdown_document(lines: Sequence[str]) -> str:
    """Lines (as `describe_site(markdown=True)` returns them) as one Markdown document."""
    blocks: list[tuple[str, list[str]]] = []
    in_fence = False
    for line in lines:
        fence_line = line.startswith(_FENCE)
        if in_fence or fence_line:
            if in_fence:
                blocks[-1][1].append(line)
            else:
                blocks.append(("fence", [line]))
            in_fence = in_fence != fence_line
            continue
        kind = _line_kind(line)
        if blocks and blocks[-1][0] == kind and kind != "fence":
            blocks[-1][1].append(line)
        else:
            blocks.append((kind, [line]))
    return "\n\n".join(
        (_HARD_BREAK if kind == "text" else "\n").join(block) for kind, block in blocks if kind != "blank"
    )


def _line_kind(line: str) -> str:
    if not line.strip():
        return "blank"
    if line.startswith(("- ", "| ")):
        return "list" if line.startswith("- ") else "table"
    return "text"


def parameter_table(sites: Sequence[Site]) -> list[str]:
    """The parameters one layer call creates: a heading with their memory, then a table row each."""
    sized = [site.bytes_per_device for site in sites]
    total = sum(size for size in sized if size is not None)
    unknown = " (some sizes unknown)" if None in sized else ""
    rows = [
        "| "
        + " | ".join(
            (
                f"`{site.name or '?'}`",
                _code(global_type(site)),
                _code(spec_text(site.spec) if site.spec is not None else None),
                _code(per_device_type(site)),
                short_bytes(size) if size is not None else "—",
            )
        )
        + " |"
        for site, size in zip(sites, sized)
    ]
    return [
        f"{len(sites)} parameters, {short_bytes(total)} per device{unknown}",
        "",
        "| parameter | global | spec | per device | bytes/device |",
        "| --- | --- | --- | --- | --- |",
        *rows,
    ]


def axis_lines(axis: str, fact: MeshFact, problems: Sequence[Diagnostic] = ()) -> list[str]:
    """A hover on an axis name: its size and type, then the mesh it belongs to."""
    mesh = fact.mesh
    index = mesh.axis_names.index(axis)
    kind = mesh.axis_types[index].value if index < len(mesh.axis_types) else "Auto"
    # A mesh being typed may have fewer sizes than names (its problems say so below).
    size = (
        f"size {mesh.axis_sizes[index]} of {mesh.size:,} devices"
        if index < len(mesh.axis_sizes)
        else f"no size (axis sizes {mesh.axis_sizes} for names {mesh.axis_names})"
    )
    return [
        f"mesh axis `{axis}`: {size}, {kind}",
        *describe_mesh(fact, problems, markdown=True),
    ]


def _code(text: str | None) -> str:
    return "—" if text is None else f"`{text}`"
