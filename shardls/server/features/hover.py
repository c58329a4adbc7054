"""Hover: the layout at the cursor, in Markdown.

The innermost thing under the cursor wins: an axis-name string (its size and mesh), a mesh
constructor (axes, sizes, devices, types), or a site: a spec, NamedSharding, device_put,
with_sharding_constraint, reshard or shard_map spec (its layout, first line
`float32[8,16@model]  →  per device float32[8,4]`), or a layer call that creates several
parameters (a table of them). The texts come from `shardls.render`, shared with `shardls explain`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lsprotocol import types

from shardls.analysis.facts import Site, SiteKind, Span
from shardls.core import PartitionSpec
from shardls.render.markdown import axis_lines, markdown_document, parameter_table
from shardls.render.site_text import describe_lone_spec, describe_mesh, describe_site
from shardls.server.features.code_lens import class_hover
from shardls.server.guard import handler
from shardls.server.spec_call import SpecCall, spec_call_at
from shardls.server.strings import literal_at
from shardls.server.view import View

if TYPE_CHECKING:
    from shardls.server.server import ShardServer

GRID_WIDTH = 80
"""Device grids wrap to this many columns, about what a hover shows without scrolling."""


@dataclass(frozen=True)
class _Target:
    span: Span
    lines: list[str]


def register(server: ShardServer) -> None:
    @handler(server, types.TEXT_DOCUMENT_HOVER, None)
    async def hover(params: types.HoverParams) -> types.Hover | None:
        view = await server.view(params.text_document.uri)
        if view is None:
            return None
        line, column = view.offset(params.position)
        model = await class_hover(server, view, line, column)
        if model is not None:
            span, lines = model
            return types.Hover(
                types.MarkupContent(types.MarkupKind.Markdown, "\n".join(lines)), view.range(span)
            )
        target = hover_target(view, line, column)
        if target is None:
            return None
        content = types.MarkupContent(types.MarkupKind.Markdown, markdown_document(target.lines))
        return types.Hover(content, view.range(target.span))


def hover_target(view: View, line: int, column: int) -> _Target | None:
    targets = [*_axis(view, line, column), *_meshes(view, line, column), *_sites(view, line, column)]
    return min(
        targets,
        key=lambda t: (t.span.end_line - t.span.line, t.span.end_column - t.span.column),
        default=None,
    )


def _axis(view: View, line: int, column: int) -> list[_Target]:
    literal = literal_at(view.unit.lines, line, column)
    if literal is None:
        return []
    facts = view.meshes_with_axis(literal.value, line, column)
    if not facts:
        return []
    problems = view.diagnostics_in(literal.span)
    return [_Target(literal.span, axis_lines(literal.value, facts[0], problems))]


def _meshes(view: View, line: int, column: int) -> list[_Target]:
    return [
        _Target(fact.span, describe_mesh(fact, view.diagnostics_in(fact.span), markdown=True))
        for fact in view.analysis.meshes
        if fact.span is not None and view.in_this_file(fact.path) and fact.span.contains(line, column)
    ]


def _sites(view: View, line: int, column: int) -> list[_Target]:
    written = spec_call_at(view.unit.lines, line, column)
    places = view.places_at(line, column)
    if written is not None:
        # The spec under the cursor, never another spec of the same call (`in_specs=(P(a), P(b))`).
        places = [(span, site) for span, site in places if _describes(site, span, written)]
        if not places:
            meshes = [m for m in view.analysis.meshes if view.in_this_file(m.path)]
            return [
                _Target(written.span, describe_lone_spec(written.text, written.spec, meshes, markdown=True))
            ]
    if not places:
        return []
    span = places[0][0]
    same = [site for place, site in places if place == span]
    if len(same) > 1 and all(site.kind is SiteKind.PARAM for site in same):
        return [_Target(span, parameter_table(same))]
    site = same[0]
    problems = view.diagnostics_in(site.span)
    if site.spec_span is not None:
        problems += [d for d in view.diagnostics_in(site.spec_span) if d not in problems]
    return [_Target(span, describe_site(site, problems, markdown=True, width=GRID_WIDTH))]


def _describes(site: Site, place: Span, written: SpecCall) -> bool:
    """Whether the site is about the spec written under the cursor: its place or spec lies inside
    that call, or, when the analysis knows only the whole call (`in_specs` of a pytree), it has
    the same spec."""
    if place.within(written.span) or (site.spec_span is not None and site.spec_span.within(written.span)):
        return True
    return (
        written.spec is not None
        and site.spec is not None
        and site.spec_span == site.span
        and _same_spec(site.spec, written.spec)
    )


def _same_spec(a: PartitionSpec, b: PartitionSpec) -> bool:
    return (a.entries, a.unreduced, a.reduced) == (b.entries, b.unreduced, b.reduced)
