"""Keeping up with the editor: the session's start, documents and notebooks opening, changing and
closing, settings, and files changing on disk.

pygls applies every text change to its workspace before these handlers run; they hand the new
texts of Python files to the analyzer (so that files importing them see the edits) and tell the
features what changed. Nothing here analyses: diagnostics and hints are computed when a quiet
moment comes or a request asks.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from shardls.server.guard import handler
from shardls.server.view import same_file

if TYPE_CHECKING:
    from shardls.server.server import ShardServer

WATCHED = ("**/*.py", "**/pyproject.toml", "**/shardls.toml")


def register(server: ShardServer) -> None:
    @handler(server, types.INITIALIZE, None)
    async def initialize(params: types.InitializeParams) -> None:
        server.start(_roots(params))
        server.settings.update(params.initialization_options)

    @handler(server, types.INITIALIZED, None)
    async def initialized(params: types.InitializedParams) -> None:
        server.analyses.prepare()
        if server.supports("workspace", "did_change_watched_files", "dynamic_registration"):
            options = types.DidChangeWatchedFilesRegistrationOptions(
                [types.FileSystemWatcher(pattern) for pattern in WATCHED]
            )
            registration = types.Registration(
                "shardls-files", types.WORKSPACE_DID_CHANGE_WATCHED_FILES, options
            )
            await server.client_register_capability_async(types.RegistrationParams([registration]))
        await _pull_settings(server)

    @handler(server, types.TEXT_DOCUMENT_DID_OPEN, None)
    async def did_open(params: types.DidOpenTextDocumentParams) -> None:
        _document_changed(server, params.text_document.uri)

    @handler(server, types.TEXT_DOCUMENT_DID_CHANGE, None)
    async def did_change(params: types.DidChangeTextDocumentParams) -> None:
        _document_changed(server, params.text_document.uri)

    @handler(server, types.TEXT_DOCUMENT_DID_CLOSE, None)
    async def did_close(params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = to_fs_path(uri) or uri
        # The file may still be open under another spelling of its URI: its text stays the editor's.
        other = next(
            (unit for unit in server.units() if not unit.is_notebook and same_file(unit.path, path)), None
        )
        server.analyses.set_text(path, other.text if other is not None else None)
        server.closed(uri, [uri])
        server.changed(None)

    @handler(server, types.NOTEBOOK_DOCUMENT_DID_OPEN, None)
    async def notebook_open(params: types.DidOpenNotebookDocumentParams) -> None:
        server.changed(params.notebook_document.uri)

    @handler(server, types.NOTEBOOK_DOCUMENT_DID_CHANGE, None)
    async def notebook_change(params: types.DidChangeNotebookDocumentParams) -> None:
        server.changed(params.notebook_document.uri)

    @handler(server, types.NOTEBOOK_DOCUMENT_DID_CLOSE, None)
    async def notebook_close(params: types.DidCloseNotebookDocumentParams) -> None:
        server.closed(params.notebook_document.uri, [cell.uri for cell in params.cell_text_documents])

    @handler(server, types.WORKSPACE_DID_CHANGE_CONFIGURATION, None)
    async def configuration(params: types.DidChangeConfigurationParams) -> None:
        # Push-style clients send the settings; pull-style ones send null and expect a request.
        pushed = params.settings if isinstance(params.settings, dict) and params.settings else None
        if pushed is None:
            await _pull_settings(server)
        elif server.settings.update(pushed):
            server.changed(None)

    @handler(server, types.WORKSPACE_DID_CHANGE_WATCHED_FILES, None)
    async def files_changed(params: types.DidChangeWatchedFilesParams) -> None:
        server.settings.files_changed()
        server.analyses.changed()
        server.changed(None)

    @handler(server, types.SHUTDOWN, None)
    async def shutdown(params: None) -> None:
        server.debouncer.cancel_all()
        server.analyses.close()


def _document_changed(server: ShardServer, uri: str) -> None:
    unit = server.unit(uri)
    if unit is None:
        return
    if not unit.is_notebook:
        server.analyses.set_text(unit.path, unit.text)
    server.changed(unit.uri)


async def _pull_settings(server: ShardServer) -> None:
    if not server.supports("workspace", "configuration"):
        return
    answer = await server.workspace_configuration_async(
        types.ConfigurationParams([types.ConfigurationItem(section="shardls")])
    )
    # null: the client has no settings for shardls; the initializationOptions stay.
    if answer and answer[0] is not None and server.settings.update(answer[0]):
        server.changed(None)


def _roots(params: types.InitializeParams) -> list[Path]:
    uris = [folder.uri for folder in params.workspace_folders or []] or [params.root_uri or ""]
    paths = [to_fs_path(uri) for uri in uris if uri] or ([params.root_path] if params.root_path else [])
    return [Path(path) for path in paths if path]
