"""The server object: pygls's LanguageServer plus the state the features share.

Handlers live in `shardls.server.features`, one module per feature, each registering itself
with `register(server)`; they translate between LSP messages and the analysis' facts, and leave
rendering to `shardls.render`.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from cattrs import ClassValidationError, transform_error
from lsprotocol import types
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcMethodNotFound,
    JsonRpcServerNotInitialized,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
)

from shardls import __version__
from shardls.files import decode_source_loosely, read_workspace_file, source_lines
from shardls.server.analyses import Analyses, Result
from shardls.server.debounce import Debouncer
from shardls.server.documents import FOLLOWED_CHARS, EditorDocument, EditorWorkspace
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
PartialListener = Callable[[Result], None]
"""Told what the first analysis of a unit has found so far (diagnostics only, see `Analyses`)."""


def _exact(uri: str) -> str:
    return uri


_EDITS: dict[str, tuple[str, str, Callable[[str], str]]] = {
    types.TEXT_DOCUMENT_DID_CHANGE: ("text_document", "text_documents", _exact),
    types.NOTEBOOK_DOCUMENT_DID_CHANGE: ("notebook_document", "notebook_documents", unquote),
}
"""Notifications that edit an open document: the member of their params naming it, the
workspace's documents it must be among, and how those are keyed (text documents by their exact
URI, see EditorWorkspace; notebooks as pygls keys them)."""


class _Protocol(LanguageServerProtocol):
    """Fixes to pygls, which

    - drops a request whose params do not fit the method's types, and any request after
      `shutdown`, without answering, so the client would wait forever: they are answered with
      an error, and a message that cannot be read (or a request refused by pygls, such as an
      unknown command) is logged in one line, not a traceback, and shown to no one;
    - answers a request before `initialize` with `null` (LSP: error -32002), takes a second
      `initialize` as a new session (dropping every open document: it is refused), and never
      answers a request for a notification's method (`$/progress` with an id: MethodNotFound);
    - keeps every notification's future (they are let go);
    - showed the user "Error in server: KeyError" for an edit to a document or notebook cell
      that is not open (the edit is ignored, with a warning in the log);
    - would apply each incremental edit to an oversized document at a cost in proportion to its
      size (they are ignored: see shardls.server.documents).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_seen = False

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        msg_id = getattr(message, "id", None)
        if method is not None and msg_id is not None:
            refusal = self._refusal(method)
            if refusal is not None:
                self._send_response(msg_id, error=refusal.to_response_error())
                return
            self._initialize_seen = True  # only `initialize` gets here first
        elif method is not None and not self._initialize_seen and method != types.EXIT:
            logger.warning("%s before initialize: ignored", method)
            return
        if method in _EDITS and not self._edit_applies(method, message.params):
            return
        super().handle_message(message)

    def _refusal(self, method: str) -> JsonRpcException | None:
        """Why a request is answered with an error before any handler sees it (None: it is not)."""
        if self._shutdown and method != types.EXIT:
            return JsonRpcInvalidRequest("the server is shutting down")
        if method == types.INITIALIZE and self._initialize_seen:
            return JsonRpcInvalidRequest("initialize may be sent only once")
        if method != types.INITIALIZE and not self._initialize_seen:
            return JsonRpcServerNotInitialized(f"{method} before initialize")
        return None

    def _edit_applies(self, method: str, params: Any) -> bool:
        """Whether an edit notification goes on to pygls; the reason in the log when not."""
        member, documents, key = _EDITS[method]
        uri = getattr(params, member).uri
        open_documents = getattr(self._workspace, documents, {})
        if key(uri) not in open_documents:
            logger.warning("%s of %s, which is not open: ignored", method, uri)
            return False
        if method == types.TEXT_DOCUMENT_DID_CHANGE:
            document = open_documents[uri]
            partial = all(
                isinstance(c, types.TextDocumentContentChangePartial) for c in params.content_changes
            )
            if partial and isinstance(document, EditorDocument) and document.oversized:
                logger.debug("An edit of %s, over %d characters: ignored", uri, FOLLOWED_CHARS)
                return False
        else:
            cells = params.change.cells
            text_documents = self.workspace.text_documents
            for content in (cells.text_content or []) if cells is not None else []:
                if content.document.uri not in text_documents:
                    logger.warning("An edit of cell %s, which is not open: ignored", content.document.uri)
            if cells is not None and cells.text_content:
                cells.text_content = [c for c in cells.text_content if c.document.uri in text_documents]
        return True

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        error = None if future.cancelled() else future.exception()
        if isinstance(error, JsonRpcException):  # the client's mistake (an unknown command)
            self._request_futures.pop(msg_id, None)
            logger.warning("Request %r answered an error: %s", msg_id, error)
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _check_handler_result(self, future: Any) -> None:
        super()._check_handler_result(future)
        # pygls files each notification's futures under a fresh id and never removes them: about
        # 3 KB kept per keystroke (didChange) for the life of the server. Finished ones go.
        for key in [key for key, value in self._request_futures.items() if value.done()]:
            del self._request_futures[key]

    def structure_message(self, data: dict[str, Any]) -> Any:
        """pygls's reading of a message, without its traceback in the log for every message that
        does not fit its method's types; a request among them is answered with the error."""
        if "jsonrpc" not in data:  # a nested object (pygls's TCP reader hands every one here)
            return data
        request = "method" in data and "id" in data
        try:
            message: Any = self._converter.structure(data, self._message_type(data))
            if request and getattr(message, "id", None) is None:  # read as a notification
                raise JsonRpcMethodNotFound(f"{data['method']} is a notification, not a request")
        except Exception as error:
            problem = error if isinstance(error, JsonRpcException) else _unreadable(data, error)
            if request and isinstance(data["id"], int | str):
                self._send_response(data["id"], error=problem.to_response_error())
            raise problem from None
        return message

    def _message_type(self, data: dict[str, Any]) -> type:
        if "method" in data:
            default = JsonRPCRequestMessage if "id" in data else JsonRPCNotification
            return self.get_message_type(data["method"]) or default
        if "error" in data:
            return types.ResponseErrorMessage
        return self._result_types.pop(data["id"], None) or JsonRPCResponseMessage


def _unreadable(data: dict[str, Any], error: Exception) -> JsonRpcException:
    """The error answered for a message whose params do not fit its method's types, in one line."""
    what = data.get("method", "response")
    if isinstance(error, ClassValidationError):
        return JsonRpcInvalidParams(f"invalid params of {what}: {'; '.join(transform_error(error))}")
    return JsonRpcInternalError(f"cannot read the {what} message: {type(error).__name__}: {error}")


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
        self.partial_listeners: list[PartialListener] = []

    def start(self, roots: list[Path]) -> None:
        """At `initialize`: analyse with imports resolved from the workspace folders, and keep
        the documents in an EditorWorkspace (pygls has just made its own, still empty)."""
        self.roots = roots
        self.analyses = Analyses(roots, self.settings.config_for, self.partial)
        self.protocol._workspace = EditorWorkspace.like(self.workspace)

    def changed(self, uri: str | None) -> None:
        for listener in self.change_listeners:
            listener(uri)

    def partial(self, result: Result) -> None:
        for listener in self.partial_listeners:
            listener(result)

    def closed(self, uri: str, documents: Sequence[str]) -> None:
        for listener in self.close_listeners:
            listener(uri, documents)

    def unit(self, uri: str) -> Unit | None:
        return unit_for(self.workspace, uri)

    def units(self) -> list[Unit]:
        return open_units(self.workspace)

    async def view(self, uri: str) -> View | None:
        """The analysis of the document's current version (None: not a Python document)."""
        unit = self._analysed_unit(uri)
        if unit is None:
            return None
        result = await self.analyses.result(unit, self.settings.for_path(unit.path))
        return View(result, uri, self.workspace.position_codec, self.lines_of)

    async def stored_view(self, uri: str) -> View | None:
        """The diagnostics of the document's current version from the persistent cache, before
        its first analysis in this session (None: not there; see `Analyses.stored`)."""
        unit = self._analysed_unit(uri)
        if unit is None:
            return None
        result = await self.analyses.stored(unit, self.settings.for_path(unit.path))
        return None if result is None else View(result, uri, self.workspace.position_codec, self.lines_of)

    def _analysed_unit(self, uri: str) -> Unit | None:
        """The unit of a document that is analysed (None: not Python, a notebook without code
        cells, or a Markdown cell)."""
        unit = self.unit(uri)
        if unit is None or not unit.parts or (uri != unit.uri and unit.part(uri) is None):
            return None
        return unit

    def lines_of(self, path: str) -> Sequence[str] | None:
        """A file's lines: the editor's text when it is open, else the disk's."""
        for unit in self.units():
            if same_file(unit.path, path):
                return unit.lines
        try:
            return source_lines(decode_source_loosely(read_workspace_file(path, self.roots, MAX_READ_BYTES)))
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


SWITCH_INTERVAL = 0.001
"""Seconds the analysis thread may hold the interpreter while the event loop waits for it
(Python's default is 0.005): a hover whose analysis is done, 0.5 ms of work, waited up to 5 ms
whenever the thread was busy with another file, a whole-model computation or the cache."""


def create_server() -> ShardServer:
    sys.setswitchinterval(SWITCH_INTERVAL)
    server = ShardServer()
    for feature in FEATURES:
        feature.register(server)
    return server
