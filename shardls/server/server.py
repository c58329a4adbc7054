"""The server object: pygls's LanguageServer plus the state the features share.

Handlers live in `shardls.server.features`, one module per feature, each registering itself
with `register(server)`; they translate between LSP messages and the analysis' facts, and leave
rendering to `shardls.render`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from shardls import __version__
from shardls.files import source_lines
from shardls.server.analyses import Analyses
from shardls.server.debounce import Debouncer
from shardls.server.features import FEATURES
from shardls.server.settings import SettingsStore
from shardls.server.units import Unit, open_units, unit_for
from shardls.server.view import View, same_file

NAME = "shardls"
ANALYSIS_DELAY = 0.05
"""Seconds a change waits for the next keystroke before it is analysed: long enough to coalesce
a burst of typing, short next to the analysis itself (a one-line edit of 20k lines: ~50 ms)."""
"""Seconds without edits before a document's diagnostics are computed (requests do not wait)."""
MAX_READ_BYTES = 2_000_000

NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(cells=[types.NotebookCellLanguage("python")], notebook="*")
    ]
)

logger = logging.getLogger("shardls.server")

ChangeListener = Callable[[str | None], None]
"""Told the URI of a unit that changed, or None when anything may have (settings, files on disk)."""
CloseListener = Callable[[str, Sequence[str]], None]
"""Told the URI of a unit that closed and the URIs of its documents (the file, or the cells)."""


_EDITS = {
    types.TEXT_DOCUMENT_DID_CHANGE: ("text_document", "text_documents"),
    types.NOTEBOOK_DOCUMENT_DID_CHANGE: ("notebook_document", "notebook_documents"),
}
"""Notifications that edit an open document: the member of their params naming it, and the
workspace's documents it must be among."""


class _Protocol(LanguageServerProtocol):
    """Fixes to pygls: it drops a request whose params do not fit the method's types, and any
    request after `shutdown`, without answering, so the client would wait forever (they are
    answered with an error); it keeps every notification's future (they are let go); and an
    edit to a document that is not open made it show the user "Error in server: KeyError" (the
    edit is ignored, with a warning in the log)."""

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if self._shutdown and method not in (None, types.EXIT) and getattr(message, "id", None) is not None:
            error = JsonRpcInvalidRequest("the server is shutting down").to_response_error()
            self._send_response(message.id, error=error)
            return
        if method in _EDITS:
            member, documents = _EDITS[method]
            uri = getattr(message.params, member).uri
            if self._workspace is None or unquote(uri) not in getattr(self._workspace, documents):
                logger.warning("%s of %s, which is not open: ignored", method, uri)
                return
        super().handle_message(message)

    def _check_handler_result(self, future: Any) -> None:
        super()._check_handler_result(future)
        # pygls files each notification's futures under a fresh id and never removes them: about
        # 3 KB kept per keystroke (didChange) for the life of the server. Finished ones go.
        for key in [key for key, value in self._request_futures.items() if value.done()]:
            del self._request_futures[key]

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if "method" in data and isinstance(data.get("id"), int | str):
                self._send_response(data["id"], error=error.to_response_error())
            raise


class ShardServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            NAME,
            __version__,
            protocol_cls=_Protocol,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=NOTEBOOK_SYNC,
        )
        self.roots: list[Path] = []
        self.analyses = Analyses(self.roots)
        self.settings = SettingsStore(self.warn)
        self.debouncer = Debouncer(ANALYSIS_DELAY)
        self.change_listeners: list[ChangeListener] = []
        self.close_listeners: list[CloseListener] = []

    def start(self, roots: list[Path]) -> None:
        """At `initialize`: analyse with imports resolved from the workspace folders."""
        self.roots = roots
        self.analyses = Analyses(roots)

    def changed(self, uri: str | None) -> None:
        for listener in self.change_listeners:
            listener(uri)

    def closed(self, uri: str, documents: Sequence[str]) -> None:
        for listener in self.close_listeners:
            listener(uri, documents)

    def unit(self, uri: str) -> Unit | None:
        return unit_for(self.workspace, uri)

    def units(self) -> list[Unit]:
        return open_units(self.workspace)

    async def view(self, uri: str) -> View | None:
        """The analysis of the document's current version (None: not a Python document)."""
        unit = self.unit(uri)
        if unit is None or (uri != unit.uri and unit.part(uri) is None):  # not Python, or a Markdown cell
            return None
        result = await self.analyses.result(unit, self.settings.for_path(unit.path))
        return View(result, uri, self.workspace.position_codec, self.lines_of)

    def lines_of(self, path: str) -> Sequence[str] | None:
        """A file's lines: the editor's text when it is open, else the disk's."""
        for unit in self.units():
            if same_file(unit.path, path):
                return unit.lines
        try:
            if Path(path).stat().st_size > MAX_READ_BYTES:
                return None
            return source_lines(Path(path).read_bytes().decode("utf-8", errors="replace"))
        except OSError:
            return None

    def warn(self, message: str) -> None:
        """A problem the user should fix (a bad setting or configuration file), shown as a warning."""
        logger.warning("%s", message)
        self.window_show_message(types.ShowMessageParams(types.MessageType.Warning, f"shardls: {message}"))

    def supports(self, *path: str) -> bool:
        """Whether the client declared a capability, e.g. `supports("workspace", "configuration")`."""
        value: object = self.client_capabilities
        for name in path:
            value = getattr(value, name, None)
        return bool(value)


def create_server() -> ShardServer:
    server = ShardServer()
    for feature in FEATURES:
        feature.register(server)
    return server
