"""A site of the analysis as text: one summary line, or the full description a hover shows.

`shardls check --show-layouts` prints `layout_summary`; `shardls explain` prints
`describe_site`/`describe_mesh`, and the language server's hover renders the same lines with
`markdown=True`, so the command line and the editor never disagree about a layout.
Dimensions whose size is unknown are shown by name (`n`, per device `n/4`), never as a number;
when the mesh is not known here the spec still says which dimensions are split over which named
axes, and the size of an axis is written `|data|` (per device `n/|data|`, over two axes
`n/(|data|*|model|)`), with the divisibility each split dimension needs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from shardls.analysis.facts import Diagnostic, Dim, MeshFact, ShardDim, Site, SiteKind, SymbolicDim
from shardls.analysis.rules import ALL_RULES
from shardls.core import AxisType, PartitionSpec, UsageContext
from shardls.render.grid import device_grid
from shardls.render.layout_text import mesh_text, spec_text
from shardls.render.movement import movement_text
from shardls.render.units import human_bytes, short_bytes


def dim_text(dim: Dim) -> str:
    return dim.name if isinstance(dim, SymbolicDim) else str(dim)


def axis_size_text(axes: tuple[str, ...]) -> str:
    """`|data|`, the size of a mesh axis not known here; `(|data|*|model|)` for several."""
    sizes = "*".join(f"|{axis}|" for axis in axes)
    return sizes if len(axes) == 1 else f"({sizes})"


_ATOM = re.compile(r"[\w.]+(\[\d+\])*")
"""A size written as one name (`d_model`, `cfg.dim`, `x.shape[0]`): divided without brackets."""


def dim_formula(dim: ShardDim) -> str:
    """What one device holds along a dimension: `4`, `n/4`, `n/|data|`, `128/(|data|*|fsdp|)`."""
    if dim.per_device is not None:
        return str(dim.per_device)
    size = dim_text(dim.size)
    if dim.factor == 1:
        return size
    if not _ATOM.fullmatch(size):
        size = f"({size})"
    return f"{size}/{dim.factor if dim.factor is not None else axis_size_text(dim.axes)}"


def shard_formula(site: Site) -> list[str] | None:
    """The per-device shape as formulas, one per dimension; None when the rank is not known or JAX
    rejects the layout."""
    dims = site.shard_dims
    return None if dims is None else [dim_formula(dim) for dim in dims]


def requirements(site: Site) -> list[str]:
    """The divisibility each split dimension needs and that cannot be checked here (a size or an
    axis size not known): `dim 0 (batch) must be divisible by the size of data`."""
    found = []
    padded = site.context is UsageContext.WSC
    for index, dim in enumerate(site.shard_dims or ()):
        if not dim.undecided:
            continue
        if dim.factor is not None:
            by = str(dim.factor)
        elif len(dim.axes) == 1:
            by = f"the size of {dim.axes[0]}"
        else:
            by = "the product of the sizes of " + " × ".join(dim.axes)
        size = f" ({dim_text(dim.size)})" if isinstance(dim.size, SymbolicDim) else f" (size {dim.size})"
        found.append(
            f"dim {index}{size} must be divisible by {by}"
            + (" (else its shards are padded)" if padded else "")
        )
    return found


def rank_text(site: Site) -> str | None:
    """`rank ≥ 2` when only the spec's length bounds the rank."""
    return None if site.min_rank is None or site.min_rank == 0 else f"rank ≥ {site.min_rank}"


def global_type(site: Site) -> str | None:
    """`float32[8@data,n@model]`: JAX's sharding-in-types notation; None when the shape is unknown."""
    if site.shape is None:
        return None
    split = site.shard_dims
    axes = (
        site.layout.dim_axes
        if site.layout is not None
        else tuple(dim.axes for dim in split)
        if split is not None
        else ((),) * len(site.shape)
    )
    dims = [
        dim_text(dim) + ("" if not names else f"@{names[0]}" if len(names) == 1 else f"@({','.join(names)})")
        for dim, names in zip(site.shape, axes)
    ]
    return f"{_dtype(site)}[{','.join(dims)}]"


def per_device_type(site: Site) -> str | None:
    """`float32[4,n/4]`, `float32[n/|data|,16]` with no mesh known here; None when the rank is
    unknown or JAX rejects the layout."""
    formula = shard_formula(site)
    return None if formula is None else f"{_dtype(site)}[{','.join(formula)}]"


def layout_summary(site: Site) -> str:
    """`device_put x: float32[8@data,16] → per device float32[4,16] ×4 copies, 256 B/device`; a
    NamedSharding built on its own adds the arrays it meets (`meets x at line 5, y at line 6`)."""
    head = site.kind.value + (f" {site.name}" if site.name else "")
    whole = global_type(site)
    if whole is None:
        spec = site.spec.display() if site.spec is not None else "no spec"
        where = f" on {site.mesh.mesh.describe()}" if site.mesh is not None else ""
        notes = [note for note in (rank_text(site), _meets_summary(site, shapes=True)) if note]
        return f"{head}: {spec}{where} (shape not known here{''.join('; ' + n for n in notes)})"
    meets = _meets_summary(site, shapes=False)
    return f"{head}: {whole} → {_outcome(site)}" + (f" ({meets})" if meets else "")


MAX_USES_SHOWN = 3
"""The uses of a NamedSharding a one-line summary names; a hover lists them all."""


def _meets_summary(site: Site, shapes: bool) -> str | None:
    """`meets x at line 5: float32[8@data,4], y at line 6: ...` (with `shapes`), or only where."""
    if not site.uses:
        return None
    shown = [
        _use_where(use) + (f": {global_type(use) or 'shape not known here'}" if shapes else "")
        for use in site.uses[:MAX_USES_SHOWN]
    ]
    more = len(site.uses) - len(shown)
    return "meets " + ", ".join(shown) + (f" and {more} more" if more else "")


def _use_where(use: Site) -> str:
    return f"{use.name or 'an array'} at line {use.span.line + 1}"


def use_text(use: Site, *, markdown: bool = False) -> str:
    """One array a NamedSharding meets, as a hover lists it: `x at line 5 (device_put):
    float32[8@data,4] → per device float32[2,4]`, or why its shape is not known."""
    text = _Text(markdown)
    head = f"{text.code(use.name) if use.name else 'an array'} at line {use.span.line + 1} ({use.kind.value})"
    whole = global_type(use)
    if whole is None:
        reason = f" ({use.shape_reason})" if use.shape_reason else ""
        return f"{head}: shape not known here{reason}"
    per_device = per_device_type(use)
    if per_device is None:
        return f"{head}: {text.code(whole)} → {_outcome(use)}"
    return f"{head}: {text.code(whole)} → per device {text.code(per_device)}"


def _no_layout(site: Site) -> str:
    return "no mesh known here" if site.mesh is None else f"mesh {site.mesh.mesh.describe()} is not usable"


def _outcome(site: Site) -> str:
    layout, per_device = site.layout, per_device_type(site)
    if layout is None:
        needs = requirements(site)
        if per_device is None:
            return _no_layout(site)
        return f"per device {per_device} ({_no_layout(site)}" + (
            f"; {len(needs)} divisibilit{'y' if len(needs) == 1 else 'ies'} to check)" if needs else ")"
        )
    if per_device is None:
        codes = sorted({p.code for p in layout.problems if p.is_error})
        return f"rejected by JAX ({', '.join(codes)})"
    if site.rejected_by_assumed_sizes:
        assumed = "the mesh shardls chose" if site.mesh and site.mesh.fallback else "the assumed mesh sizes"
        return f"per device {per_device} (JAX rejects it with {assumed}, {layout.mesh.describe()}: SH001)"
    copies = f" ×{layout.copies} copies" if layout.copies > 1 else ""
    size = site.bytes_per_device
    return f"per device {per_device}{copies}, " + (
        f"{short_bytes(size)}/device" if size is not None else "size depends on " + _unknowns(site)
    )


def describe_site(
    site: Site, problems: Sequence[Diagnostic] = (), *, markdown: bool = False, width: int = 100
) -> list[str]:
    """What a hover on the site says, most needed first: the per-device type, shards × copies,
    bytes per device, then the problems and the assumptions the figures rest on (the first screen
    of a hover); after them the mesh, spec and context, the device grid, and where each number
    comes from.

    `problems` are the diagnostics at the site (the caller knows which apply); the device grid
    is included for meshes of at most MAX_GRID_DEVICES devices when every size is known.
    """
    text = _Text(markdown)
    lines = [_first_line(site, text), *_figures(site)]
    if site.shape is None and site.shape_reason:
        lines.append(text.field("shape", f"not known here ({site.shape_reason})"))
    lines += _uses_lines(site, text)
    lines += _type_lines(site, text)
    lines += text.section("problems", [problem_text(d) for d in problems])
    lines += text.section("needs (not checked: a size is not known here)", requirements(site))
    lines += text.section("assumptions", site.assumptions)
    if site.mesh is not None:
        lines.append(text.field("mesh", text.code(mesh_text(site.mesh.mesh))))
        lines.append(text.field("from", _mesh_origin(site.mesh)))
    else:
        lines.append(text.field("mesh", "none known here (set one with `# shardls: mesh data=2,model=4`)"))
    if site.spec is not None:
        lines.append(text.field("spec", text.code(spec_text(site.spec))))
    if site.logical_spec is not None:
        lines.append(text.field("logical spec", text.code(spec_text(site.logical_spec))))
    if site.rule_chain:
        lines += text.section("rules", site.rule_chain)
    if site.kind is not SiteKind.ARRAY_TYPE:
        lines.append(text.field("used in", site.context.label))
    grid = _grid(site, text, width)
    lines += [*grid, ""] if grid and site.provenance else grid
    lines += text.section("where the numbers come from", site.provenance)
    return lines


def _uses_lines(site: Site, text: _Text) -> list[str]:
    """For a NamedSharding built on its own: the arrays it meets, and why its shape is theirs or
    not known (they disagree, or none of them has a known shape)."""
    if not site.uses:
        return []
    count = len(site.uses)
    label = f"meets ({count} use{'' if count == 1 else 's'} in this file)"
    items = [use_text(use, markdown=text.markdown) for use in site.uses]
    if site.shape is not None:
        why = "its shape is the one every use with a known shape has"
    elif any(use.shape is not None for use in site.uses):
        why = "its shape is not known here: the uses have different shapes, per-device shapes or dtypes"
    else:
        why = "its shape is not known here: no use has a known shape"
    return [*text.section(label, items), why]


def _figures(site: Site) -> list[str]:
    """`8 distinct shards × 1 copy` and the bytes per device; nothing when JAX rejects the layout."""
    layout = site.layout
    if layout is None or not layout.is_valid:
        return []
    shards, copies = layout.num_distinct_shards, layout.copies
    per_device = site.bytes_per_device
    return [
        f"{shards:,} distinct shard{'s' if shards != 1 else ''} × {copies:,} cop{'y' if copies == 1 else 'ies'}",
        f"{human_bytes(per_device)} per device, {human_bytes(per_device * layout.mesh.size)} "
        f"over all {layout.mesh.size:,} devices"
        if per_device is not None
        else f"memory depends on {_unknowns(site)}",
    ]


def _grid(site: Site, text: _Text, width: int) -> list[str]:
    layout = site.layout
    if layout is None or not layout.is_valid or site.symbolic_dims:
        return []
    return ["", *text.block(device_grid(layout, width).splitlines())]


def describe_mesh(
    fact: MeshFact, problems: Sequence[Diagnostic] = (), *, markdown: bool = False
) -> list[str]:
    """What a hover on a mesh definition says: its axes and devices, where it comes from."""
    text = _Text(markdown)
    return [
        text.field("mesh", text.code(mesh_text(fact.mesh)))
        + (f", named {text.code(fact.name)}" if fact.name else ""),
        text.field("from", _mesh_origin(fact)),
        *text.section("assumptions", fact.assumptions),
        *text.section("problems", [problem_text(d) for d in problems]),
    ]


def describe_lone_spec(
    written: str, spec: PartitionSpec | None, meshes: Sequence[MeshFact], *, markdown: bool = False
) -> list[str]:
    """What a hover on a spec no site uses says: the spec, its normalised form, the mesh it may
    meet, and why no shape is known (no array meets it where shardls can follow the code)."""
    text = _Text(markdown)
    lines = [f"{text.code(written)}  (no array meets this spec where shardls can follow the code)"]
    if spec is None:
        lines.append(text.field("normalised", "not known here: some entry is not a literal"))
    else:
        lines.append(text.field("normalised", text.code(spec.canonical())))
        rank = len(spec)
        if rank:
            split = [f"dim {i} over {' × '.join(names)}" for i, names in enumerate(spec.entry_names) if names]
            lines.append(
                f"fits arrays of rank ≥ {rank}"
                + (f"; splits {', '.join(split)}" if split else "; splits nothing")
            )
    if len(meshes) == 1:
        mesh = meshes[0]
        lines.append(
            text.field(
                "mesh",
                f"probably {text.code(mesh_text(mesh.mesh))} ({mesh.source}), the only mesh in this file",
            )
        )
    else:
        lines.append(
            text.field(
                "mesh",
                "not known here: "
                + (f"{len(meshes)} meshes in this file" if meshes else "this file builds none"),
            )
        )
    lines.append(
        text.field(
            "shape",
            "not known here: the spec is not passed to a placement shardls follows (device_put, "
            "with_sharding_constraint, reshard, shard_map, jit shardings, NamedSharding, a parameter's "
            "sharding) in code reached with known arguments",
        )
    )
    return lines


def problem_text(diagnostic: Diagnostic) -> str:
    """`error SH001 indivisible-dimension: <message>`."""
    rule = ALL_RULES.get(diagnostic.code)
    name = f" {rule.name}" if rule else ""
    return f"{diagnostic.severity.value} {diagnostic.code}{name}: {diagnostic.message}"


def _type_lines(site: Site, text: _Text) -> list[str]:
    """For an array of known sharded type: `jax.typeof`, why part of its layout is not known, and
    which line gave each mesh axis its place; for a placement from a known layout, the data each
    device receives. A placement's own spec already says the rest."""
    if site.jax_type is None:
        return []
    computed = site.kind in (SiteKind.ARRAY_TYPE, SiteKind.ARRAY_NAME)
    lines = []
    if computed or site.jax_type != global_type(site):
        lines.append(text.field("jax.typeof", text.code(site.jax_type)))
    if site.movement is not None:
        lines.append(movement_text(site.movement))
    if site.compiler_chosen:
        axes = ", ".join(text.code(a) for a in site.compiler_chosen)
        lines.append(f"along the Auto axes {axes} the compiler chooses where the data lies (not shown)")
    if site.layout is None and site.spec is not None and site.spec.unreduced:
        axes = ", ".join(text.code(a) for a in sorted(site.spec.unreduced))
        lines.append(f"holds partial sums over {axes} until it is reduced")
    if computed:
        lines += text.section("sharding from", site.type_sources)
    return lines


def _first_line(site: Site, text: _Text) -> str:
    manual = _manual_axes(site)
    if site.jax_type is not None and manual:
        axes = ", ".join(text.code(a) for a in manual)
        return (
            f"{text.code(site.jax_type)}  →  one device's block, inside a shard_map body (manual axes {axes})"
        )
    if site.jax_type is not None and site.layout is None:
        return f"{text.code(site.jax_type)}  →  per device: not known here (see below)"
    whole = global_type(site)
    if whole is None:
        spec = spec_text(site.spec) if site.spec is not None else "no spec"
        rank = rank_text(site)
        return f"{text.code(spec)}  (the array's shape is not known here{': ' + rank if rank else ''})"
    per_device = per_device_type(site)
    if per_device is not None:
        where = f" ({_no_layout(site)})" if site.layout is None else ""
        return f"{text.code(whole)}  →  per device {text.code(per_device)}{where}"
    return f"{text.code(whole)}  →  {_outcome(site)}"


def _manual_axes(site: Site) -> tuple[str, ...]:
    """The Manual axes of the mesh an array lives on: a shard_map body's, where its type is
    already per device (`{V:...}` names those it may differ along)."""
    mesh = site.mesh.mesh if site.mesh is not None else None
    if mesh is None:
        return ()
    return tuple(n for n, t in zip(mesh.axis_names, mesh.axis_types, strict=True) if t is AxisType.MANUAL)


def _mesh_origin(fact: MeshFact) -> str:
    return fact.source + (f"; {fact.selection}" if fact.selection else "")


def _unknowns(site: Site) -> str:
    shape = site.shape or ()
    return ", ".join(dim_text(shape[i]) for i in site.symbolic_dims if i < len(shape))


def _dtype(site: Site) -> str:
    return site.dtype.name if site.dtype is not None else "?"


@dataclass(frozen=True)
class _Text:
    """The few ways plain text and Markdown differ: code spans, labels, lists and blocks."""

    markdown: bool

    def code(self, text: str) -> str:
        return f"`{text}`" if self.markdown else text

    def field(self, label: str, value: str) -> str:
        return f"**{label}**: {value}" if self.markdown else f"{label}: {value}"

    def section(self, label: str, items: Sequence[str]) -> list[str]:
        if not items:
            return []
        bullet = "- " if self.markdown else "  "
        return [f"**{label}**:" if self.markdown else f"{label}:", *(bullet + item for item in items)]

    def block(self, lines: Sequence[str]) -> list[str]:
        return ["```text", *lines, "```"] if self.markdown else list(lines)
