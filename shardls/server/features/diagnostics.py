"""Diagnostics, pulled (textDocument/diagnostic) by clients that support it, pushed
(textDocument/publishDiagnostics) to the others.

Pushing happens after a quiet moment: the edited unit first, then every other open unit, since
it may import the edited file (the analyzer's per-segment cache makes re-checking those cheap).
A document's diagnostics are only sent when they differ from what the client has. Pulling
clients are asked to pull again (workspace/diagnostic/refresh) when another document or a
setting changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from lsprotocol import types

from shardls.analysis.facts import Diagnostic
from shardls.analysis.rules import rule_url
from shardls.core import Severity
from shardls.server.analyses import Result
from shardls.server.guard import background, handler
from shardls.server.view import View
from shardls.server.wire import Serialised, publish, to_json

if TYPE_CHECKING:
    from shardls.server.server import ShardServer

SOURCE = "shardls"
_REFRESH = "workspace/diagnostic/refresh"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def rule_docs(code: str) -> str:
    return rule_url(code)


def lsp_diagnostic(view: View, diagnostic: Diagnostic) -> types.Diagnostic:
    """One diagnostic of the view's unit, with its rule's page and where its mesh is defined."""
    location = view.location(diagnostic.span)
    assert location is not None  # a span of the unit itself always has a place
    related = [
        types.DiagnosticRelatedInformation(place, item.message)
        for item in diagnostic.related
        if (place := view.location(item.span, item.path)) is not None
    ]
    return types.Diagnostic(
        location.range,
        diagnostic.message,
        severity=_SEVERITY[diagnostic.severity],
        code=diagnostic.code,
        code_description=types.CodeDescription(rule_docs(diagnostic.code)),
        source=SOURCE,
        related_information=related or None,
        tags=[types.DiagnosticTag.Deprecated] if diagnostic.deprecated else None,
    )


def document_diagnostics(view: View) -> list[types.Diagnostic]:
    """The diagnostics of the document the view was asked for (one cell of a notebook)."""
    return [lsp_diagnostic(view, d) for d in view.analysis.diagnostics if view.range(d.span) is not None]


def register(server: ShardServer) -> None:
    publisher = _Publisher(server)
    server.change_listeners.append(publisher.changed)
    server.close_listeners.append(publisher.closed)
    server.partial_listeners.append(publisher.partial)

    @handler(
        server,
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.RelatedFullDocumentDiagnosticReport(items=[]),
        types.DiagnosticOptions(inter_file_dependencies=True, workspace_diagnostics=False, identifier=SOURCE),
    )
    async def pull(params: types.DocumentDiagnosticParams) -> types.RelatedFullDocumentDiagnosticReport:
        view = await server.view(params.text_document.uri)
        if view is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        report = types.RelatedFullDocumentDiagnosticReport(items=document_diagnostics(view))
        server.analyses.index_soon(view.analysis)
        return report


class _Publisher:
    def __init__(self, server: ShardServer) -> None:
        self.server = server
        self.published: dict[str, list[str]] = {}
        """Per document, the diagnostics last published (their JSON text, as sent)."""
        self.documents: dict[str, tuple[str, ...]] = {}
        """Per unit, the documents (cells) last published, to clear those that went away."""
        self.serialised: dict[str, Serialised] = {}
        """Per unit, its diagnostics as sent, reused while they are the same (`wire`)."""
        self.complete: set[str] = set()
        """Units whose published diagnostics are all of a version's (stored or analysed): what
        an analysis has found so far is no longer shown for them."""

    @property
    def pulling(self) -> bool:
        return self.server.supports("text_document", "diagnostic")

    def changed(self, uri: str | None) -> None:
        server = self.server
        units = server.units()
        if self.pulling:
            if (uri is None or any(unit.uri != uri for unit in units)) and server.supports(
                "workspace", "diagnostics", "refresh_support"
            ):
                refresh = background(
                    server, _REFRESH, lambda: server.workspace_diagnostic_refresh_async(None)
                )
                server.debouncer.schedule(_REFRESH, refresh)
            return
        at_once = server.analyses.idle
        for unit in units:
            # An edit while nothing runs is analysed at once; edits that come while an analysis
            # runs wait a little, so that a burst costs one more analysis, not one per keystroke.
            delay = (
                0.0 if at_once and unit.uri == uri else server.debouncer.delay * (1 if unit.uri == uri else 2)
            )
            job = background(server, f"diagnostics of {unit.uri}", partial(self.publish, unit.uri))
            server.debouncer.schedule(unit.uri, job, delay)

    def closed(self, uri: str, documents: Sequence[str]) -> None:
        self.server.debouncer.cancel(uri)
        self.server.analyses.forget(uri)
        self.serialised.pop(uri, None)
        self.complete.discard(uri)
        for document in {*documents, *self.documents.pop(uri, ())}:
            if self.published.pop(document, None) and not self.pulling:
                publish(self.server.protocol, document, [], None)

    async def publish(self, uri: str) -> None:
        """The unit's diagnostics: from the persistent cache first when a file is opened (they
        are what the analysis will give), then from its analysis.

        The stored ones are a job of their own, so a failure there (an entry whose facts raise,
        a location that does not convert) is reported and costs only that early publish: it
        used to end this job before the analysis was asked, leaving the editor none at all."""
        await background(self.server, f"the stored diagnostics of {uri}", partial(self._send_stored, uri))()
        view = await self.server.view(uri)
        if view is not None:
            self._send(view)
            self.complete.add(uri)
            self.server.analyses.index_soon(view.analysis)

    async def _send_stored(self, uri: str) -> None:
        stored = await self.server.stored_view(uri)
        if stored is not None:
            self._send(stored)
            self.complete.add(uri)

    def partial(self, result: Result) -> None:
        """What the first analysis of a file has found so far: published (pushed) while the
        editor has nothing complete for the unit and the version is still the editor's. A subset
        of what the analysis will publish, so it is never wrong, only incomplete."""
        unit = result.unit
        current = self.server.unit(unit.uri)
        if self.pulling or unit.uri in self.complete or current is None or current.version != unit.version:
            return
        self._send(View(result, unit.uri, self.server.workspace.position_codec, self.server.lines_of))

    def _send(self, view: View) -> None:
        unit = view.unit
        protocol = self.server.protocol
        diagnostics = view.analysis.diagnostics
        serialised = self.serialised.setdefault(unit.uri, Serialised())
        texts = serialised.texts(unit, diagnostics, lambda d: to_json(protocol, lsp_diagnostic(view, d)))
        by_document: dict[str, list[str]] = {part.uri: [] for part in unit.parts}
        for diagnostic, text in zip(diagnostics, texts, strict=True):
            by_document[unit.part_at(diagnostic.span.line).uri].append(text)
        for gone in set(self.documents.get(unit.uri, ())) - set(by_document):
            by_document[gone] = []
        self.documents[unit.uri] = tuple(part.uri for part in unit.parts)
        versions = {part.uri: part.version for part in unit.parts}
        for document, items in by_document.items():
            if self.published.get(document) != items:
                self.published[document] = items
                publish(protocol, document, items, versions.get(document))
