"""Code actions: the quick fixes of `shardls.fixes` (shared with `shardls check --fix`) for the
diagnostics in the requested range, as WorkspaceEdits on the document (or notebook cell) they
apply to."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from lsprotocol import types

from shardls.fixes import Fix, FixSource, fixes_for
from shardls.server.features.diagnostics import lsp_diagnostic
from shardls.server.guard import handler
from shardls.server.view import View

if TYPE_CHECKING:
    from shardls.server.server import ShardServer


def register(server: ShardServer) -> None:
    @handler(
        server,
        types.TEXT_DOCUMENT_CODE_ACTION,
        [],
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    async def code_actions(params: types.CodeActionParams) -> list[types.CodeAction]:
        view = await server.view(params.text_document.uri)
        if view is None:
            return []
        actions = []
        source = FixSource(view.unit.text)
        for diagnostic in view.diagnostics_in(view.unit_range(params.range)):
            if view.range(diagnostic.span) is None:
                continue
            sites = [
                s for s in view.sites_at(diagnostic.span.line, diagnostic.span.column) if s.spec is not None
            ]
            for fix in fixes_for(diagnostic, source, sites[0] if sites else None):
                actions.append(
                    types.CodeAction(
                        fix.title,
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[lsp_diagnostic(view, diagnostic)],
                        edit=_workspace_edit(view, fix),
                        is_preferred=fix.preferred or None,
                    )
                )
        return actions


def _workspace_edit(view: View, fix: Fix) -> types.WorkspaceEdit:
    changes: dict[str, list[types.TextEdit]] = defaultdict(list)
    for edit in fix.edits:
        location = view.location(edit.span)
        if location is not None:
            changes[location.uri].append(types.TextEdit(location.range, edit.text))
    return types.WorkspaceEdit(changes=dict(changes))
