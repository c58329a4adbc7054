"""Talking to a real `shardls serve` process: a client that records what the server sends,
capabilities like an editor's, and small steps (open, edit, wait for diagnostics) the tests share.

The sources are ASCII, so LSP's UTF-16 columns are plain string indices here.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

SERVER = [sys.executable, "-I", "-m", "shardls", "serve", "--log-level", "warning"]
HANG = 120.0
"""Seconds after which a test takes the server (or an analysis, or a process) to hang. Only ever
a limit on waiting, never a timing: CI runs on a busy 2-core machine where an answer that takes
50 ms alone can take seconds. Timings are benchmarks (benchmarks/)."""

MODEL = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P(None, "model")))
vocab = jax.device_put(jnp.zeros((50257, 16)), NamedSharding(mesh, P("model", None)))
typo = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("modle")))
"""
"""Line 5 lays out float32[8,16@model]; line 6 is SH001 (50257 rows over 4); line 7 is SH005."""


class RecordingClient(LanguageClient):
    """pytest-lsp's client, also keeping every publishDiagnostics and counting refresh requests."""

    def __init__(self) -> None:
        super().__init__(converter_factory=default_converter)
        self.published: list[types.PublishDiagnosticsParams] = []
        self.inlay_hint_refreshes = 0


def _publish(client: RecordingClient, params: types.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    client.published.append(params)


def _inlay_hint_refresh(client: RecordingClient, params: None) -> None:
    client.inlay_hint_refreshes += 1


def recording_client() -> RecordingClient:
    client = RecordingClient()
    register_lsp_features(
        client,
        {
            **DEFAULT_CLIENT_FEATURES,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _publish,
            types.WORKSPACE_INLAY_HINT_REFRESH: _inlay_hint_refresh,
        },
    )
    return client


def server_config(**env: str) -> ClientServerConfig:
    return ClientServerConfig(
        server_command=SERVER,
        client_factory=recording_client,
        server_env={**os.environ, **env} if env else None,
    )


def capabilities(pull: bool = False) -> types.ClientCapabilities:
    """An editor's capabilities; `pull`: diagnostics are pulled (textDocument/diagnostic)."""
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            configuration=True,
            diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True) if pull else None,
            inlay_hint=types.InlayHintWorkspaceClientCapabilities(refresh_support=True),
        ),
        text_document=types.TextDocumentClientCapabilities(
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                related_information=True, version_support=True, code_description_support=True
            ),
            diagnostic=types.DiagnosticClientCapabilities() if pull else None,
            inlay_hint=types.InlayHintClientCapabilities(),
            completion=types.CompletionClientCapabilities(),
            code_action=types.CodeActionClientCapabilities(),
        ),
        notebook_document=types.NotebookDocumentClientCapabilities(
            synchronization=types.NotebookDocumentSyncClientCapabilities()
        ),
    )


async def initialize(
    client: RecordingClient, root: Path, *, options: dict[str, Any] | None = None, pull: bool = False
) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(pull),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(root.as_uri(), root.name)],
            initialization_options=options,
        )
    )


def open_file(client: LanguageClient, path: Path, text: str, write: bool = False) -> str:
    """Open `path` in the editor with `text` (also on disk when `write`); returns its URI."""
    if write:
        path.write_text(text)
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text))
    )
    return uri


def apply_edits(text: str, edits: Sequence[types.TextEdit]) -> str:
    """The text after the edits (ranges refer to the text before any of them, as in a WorkspaceEdit)."""
    lines = text.split("\n")

    def offset(position: types.Position) -> int:
        return sum(len(line) + 1 for line in lines[: position.line]) + position.character

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]
    return text


def send_edits(client: LanguageClient, uri: str, version: int, edits: Sequence[types.TextEdit]) -> None:
    """The edits as incremental changes, bottom first so that each range is still valid."""
    changes: list[types.TextDocumentContentChangeEvent] = [
        types.TextDocumentContentChangePartial(edit.range, edit.new_text)
        for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
    ]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version, uri), changes)
    )


def replace_all(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version, uri),
            [types.TextDocumentContentChangeWholeDocument(text)],
        )
    )


async def published(
    client: RecordingClient,
    uri: str,
    wanted: Callable[[types.PublishDiagnosticsParams], bool] = lambda params: True,
) -> types.PublishDiagnosticsParams:
    """The latest diagnostics published for `uri`, once they are what the test waits for."""
    deadline = asyncio.get_running_loop().time() + HANG
    while True:
        latest = next((p for p in reversed(client.published) if p.uri == uri), None)
        if latest is not None and wanted(latest):
            return latest
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no diagnostics as wanted for {uri}; latest: {latest}")
        await asyncio.sleep(0.02)


def codes(diagnostics: Sequence[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)


def having(*expected: str) -> Callable[[types.PublishDiagnosticsParams], bool]:
    """A wait for the publish of exactly these codes: the first analysis of a file publishes what
    it has found so far once it takes more than `PARTIAL_AFTER` (`Analyses._progress`), which
    a loaded machine makes happen for a small file too, so a first non-empty publish may be a
    part."""
    return lambda params: codes(params.diagnostics) == sorted(expected)


def position_of(text: str, needle: str, line: int | None = None, offset: int = 0) -> types.Position:
    """Where `needle` starts (on `line`, when given), moved right by `offset` characters."""
    for number, content in enumerate(text.split("\n")):
        if (line is None or number == line) and needle in content:
            return types.Position(number, content.index(needle) + offset)
    raise AssertionError(f"{needle!r} not in the text")


def word_range(text: str, needle: str, length: int | None = None) -> types.Range:
    """The range of the first `needle` (or of its first `length` characters)."""
    start = position_of(text, needle)
    return types.Range(start, types.Position(start.line, start.character + (length or len(needle))))


async def hover_text(client: LanguageClient, uri: str, position: types.Position) -> str | None:
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), position)
    )
    if hover is None:
        return None
    assert isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value
