"""After every edit of a seeded sequence, a live server's hovers and inlay hints are what a fresh
analysis of the same text renders: whatever the server reused (its per-segment caches, the
lookups of the analysis before) never shows in what the editor displays."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest
from lsp_helpers import RecordingClient, open_file
from lsprotocol import types
from pygls.protocol import default_converter
from pygls.workspace.position_codec import PositionCodec
from replay_helpers import fresh, fresh_analysis, session, settled, workspace_files

from shardls.render.markdown import markdown_document
from shardls.server.analyses import Result
from shardls.server.features.hover import hover_target
from shardls.server.features.inlay_hints import hints_in
from shardls.server.settings import SettingsStore
from shardls.server.units import Part, Unit
from shardls.server.view import View

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))

from edit_sequences import Editor

pytestmark = pytest.mark.asyncio

_CONVERTER = default_converter()
HOVERS = 12
"""Hovers asked after each edit: at the start of some sites and spots picked at random."""


def _view(path: Path, text: str, version: int) -> View:
    uri = path.as_uri()
    unit = Unit(uri, str(path), text, version, (Part(uri, 0, len(text.split("\n")), version),))
    result = Result(unit, fresh_analysis(path.parent, path, text))
    return View(result, uri, PositionCodec(), lambda _: None)


def _expected_hover(view: View, position: types.Position) -> object:
    target = hover_target(view, position.line, position.character)
    if target is None:
        return None
    content = types.MarkupContent(types.MarkupKind.Markdown, markdown_document(target.lines))
    return _CONVERTER.unstructure(types.Hover(content, view.range(target.span)))


def _positions(view: View, text: str, rng: random.Random) -> list[types.Position]:
    """Where to hover: the starts of some sites and random spots, never on a `class` line (whose
    hover is the model's memory, computed apart from the analysis)."""
    lines = text.split("\n")
    spots = [(site.span.line, site.span.column) for site in view.analysis.sites]
    spots += [(line, rng.randint(0, len(lines[line]))) for line in rng.sample(range(len(lines)), 6)]
    chosen = rng.sample(spots, min(HOVERS, len(spots)))
    return [
        types.Position(line, column)
        for line, column in chosen
        if not lines[line].lstrip().startswith("class ")
    ]


async def _check_views(
    client: RecordingClient, uri: str, path: Path, text: str, version: int, rng: random.Random
) -> None:
    view = _view(path, text, version)
    lines = text.split("\n")
    whole = types.Range(types.Position(0, 0), types.Position(len(lines), 0))
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(types.TextDocumentIdentifier(uri), whole)
    )
    typed = SettingsStore(lambda message: None).editor.type_inlay_hints
    expected_hints = hints_in(view, view.unit_range(whole), typed)
    assert _CONVERTER.unstructure(hints or []) == _CONVERTER.unstructure(expected_hints), f"version {version}"
    for position in _positions(view, text, rng):
        hover = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), position)
        )
        assert _CONVERTER.unstructure(hover) == _expected_hover(view, position), (
            f"version {version} at {position}"
        )


@pytest.mark.parametrize("seed", range(3))
async def test_hovers_and_inlay_hints_after_each_edit_are_a_fresh_analysis(tmp_path: Path, seed: int) -> None:
    root, cache = tmp_path / "project", tmp_path / "cache"
    root.mkdir()
    text = workspace_files(root)
    path = root / "model.py"
    rng = random.Random(seed)
    editor = Editor(text, rng)
    client = await session(root, cache)
    try:
        uri = open_file(client, path, text)
        await settled(client, uri, fresh(root, path, text))
        await _check_views(client, uri, path, text, 1, rng)
        for version in range(2, 10):
            edit = editor.step()
            text = editor.text
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    types.VersionedTextDocumentIdentifier(version, uri),
                    [
                        types.TextDocumentContentChangePartial(
                            types.Range(types.Position(*edit.start), types.Position(*edit.end)), edit.text
                        )
                    ],
                )
            )
            await settled(client, uri, fresh(root, path, text))
            await _check_views(client, uri, path, text, version, rng)
    finally:
        await client.shutdown_session()
