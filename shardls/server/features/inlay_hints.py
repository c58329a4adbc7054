"""Inlay hints: after each site, what one device holds (`→ [8, 4] ×2`), with the whole summary
as the tooltip. Off when the editor setting `inlayHints` is false; intermediate arrays of known
sharded type (`y = x @ w`) only with `typeInlayHints`. Clients that support it are asked to fetch
hints again when settings change.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from lsprotocol import types

from shardls.analysis.facts import Site, SiteKind, Span
from shardls.render.inlay import shard_label
from shardls.render.site_text import layout_summary
from shardls.server.guard import background, handler
from shardls.server.view import View

if TYPE_CHECKING:
    from shardls.server.server import ShardServer

_REFRESH = "workspace/inlayHint/refresh"


def register(server: ShardServer) -> None:
    server.change_listeners.append(lambda uri: _refresh(server) if uri is None else None)

    @handler(server, types.TEXT_DOCUMENT_INLAY_HINT, [], types.InlayHintOptions(resolve_provider=False))
    async def inlay_hints(params: types.InlayHintParams) -> list[types.InlayHint]:
        if not server.settings.editor.inlay_hints:
            return []
        view = await server.view(params.text_document.uri)
        if view is None:
            return []
        return hints_in(view, view.unit_range(params.range), server.settings.editor.type_inlay_hints)


def hints_in(view: View, wanted: Span, typed: bool) -> list[types.InlayHint]:
    """The hints of the sites that end in `wanted` (of intermediate typed arrays too: `typed`)."""
    by_place: dict[Span, list[Site]] = defaultdict(list)
    for site in view.analysis.sites:
        if (
            (typed or site.kind is not SiteKind.ARRAY_TYPE)
            and view.in_this_file(site.path)
            and wanted.line <= site.span.end_line <= wanted.end_line
        ):
            by_place[site.span].append(site)
    hints = []
    for span, sites in by_place.items():
        label, place = shard_label(sites), view.range(span)
        if label is not None and place is not None:
            tooltip = "\n".join(layout_summary(site) for site in sites)
            hints.append(
                types.InlayHint(
                    place.end, label, types.InlayHintKind.Type, tooltip=tooltip, padding_left=True
                )
            )
    return hints


def _refresh(server: ShardServer) -> None:
    if server.supports("workspace", "inlay_hint", "refresh_support"):
        server.debouncer.schedule(
            _REFRESH, background(server, _REFRESH, lambda: server.workspace_inlay_hint_refresh_async(None))
        )
