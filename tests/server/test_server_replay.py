"""Every publish is a fresh analysis of the text it was published for, whatever the server
reused to compute it: its per-segment caches across seeded random edits, the diagnostics it
serialised before (`shardls.server.wire`), the results it moved by the lines an edit added or
removed (also when the change came as the whole text: an undo, a revert), and its persistent cache in a later session
(`shardls.server.stored`), which must not be used once a file it read has changed. While a file
is first analysed, what it has found so far may be published: a part of the fresh analysis'
diagnostics, never one it does not have; the last publish of a version has them all."""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from lsp_helpers import RecordingClient, open_file
from lsprotocol import types
from replay_helpers import Published, as_sent, fresh, session, settled, stored_project, workspace_files

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))

from edit_sequences import Fixture, Whole, moving_sequence
from generate_models import model_source

pytestmark = pytest.mark.asyncio


def _random_edit(lines: list[str], rng: random.Random) -> tuple[types.Range, str]:
    """An edit a user makes: a number changed, a line typed half-way (a syntax error) or
    completed, a comment, a blank line inserted or a line deleted."""
    index = rng.randrange(len(lines))
    line = lines[index]
    choice = rng.random()
    if choice < 0.35 and ("128" in line or "127" in line):
        old = "128" if "128" in line else "127"
        at = line.index(old)
        return types.Range(types.Position(index, at), types.Position(index, at + 3)), rng.choice(
            ["127", "128"]
        )
    if choice < 0.5:
        return types.Range(types.Position(index, 0), types.Position(index, 0)), "y = jax.device_put(\n"
    if choice < 0.7:
        end = len(line)
        return types.Range(types.Position(index, end), types.Position(index, end)), "  # edited"
    if choice < 0.85:
        return types.Range(types.Position(index, 0), types.Position(index, 0)), "\n"
    if index + 1 < len(lines):
        return types.Range(types.Position(index, 0), types.Position(index + 1, 0)), ""
    return types.Range(types.Position(index, 0), types.Position(index, len(line))), ""


def _apply(text: str, where: types.Range, new: str) -> str:
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: where.start.line]) + where.start.character
    end = sum(len(line) + 1 for line in lines[: where.end.line]) + where.end.character
    return text[:start] + new + text[end:]


def _check_every_publish(
    client: RecordingClient, uri: str, root: Path, path: Path, texts: dict[int, str]
) -> int:
    """Each publish against a fresh analysis of its version's text: a part of it, and all of it
    when it is the version's last publish; returns how many publishes there were."""
    analysed: dict[int, Published] = {}
    sent = [params for params in client.published if params.uri == uri]
    for index, params in enumerate(sent):
        assert params.version is not None
        if params.version not in analysed:
            analysed[params.version] = fresh(root, path, texts[params.version])
        shown, wanted = as_sent(params.diagnostics), analysed[params.version]
        assert all(d in wanted for d in shown), f"version {params.version}: {set(shown) - set(wanted)}"
        if index + 1 == len(sent) or sent[index + 1].version != params.version:
            assert shown == wanted, f"version {params.version}"
    return len(sent)


Changes = Callable[[str, random.Random], Iterator[tuple[str, types.TextDocumentContentChangeEvent]]]
"""From the first text, the changes to send: each with the text it makes."""


async def _replay(tmp_path: Path, seed: int, changes: Changes) -> None:
    """The workspace's model opened, then `changes` sent, each waited for or not (then the next
    comes while it is analysed); every publish is checked at the end."""
    root, cache = tmp_path / "project", tmp_path / "cache"
    root.mkdir()
    first = text = workspace_files(root)
    path = root / "model.py"
    rng = random.Random(seed)
    client = await session(root, cache)
    try:
        uri = open_file(client, path, text)
        texts = {1: text}
        await settled(client, uri, fresh(root, path, text))
        for version, (text, sent) in enumerate(changes(first, rng), start=2):
            texts[version] = text
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version, uri), [sent])
            )
            if rng.random() < 0.5:
                await settled(client, uri, fresh(root, path, text))
        await settled(client, uri, fresh(root, path, text))
        assert _check_every_publish(client, uri, root, path, texts) >= 2
    finally:
        await client.shutdown_session()


def _random_edits(
    text: str, rng: random.Random
) -> Iterator[tuple[str, types.TextDocumentContentChangeEvent]]:
    for _ in range(12):
        where, new = _random_edit(text.split("\n"), rng)
        text = _apply(text, where, new)
        yield text, types.TextDocumentContentChangePartial(where, new)


def _moves_and_whole_texts(
    text: str, rng: random.Random
) -> Iterator[tuple[str, types.TextDocumentContentChangeEvent]]:
    for change in moving_sequence(Fixture("model", text), rng.randrange(1000), 10):
        text = change.apply(text)
        if isinstance(change, Whole):
            yield text, types.TextDocumentContentChangeWholeDocument(text)
        else:
            where = types.Range(types.Position(*change.start), types.Position(*change.end))
            yield text, types.TextDocumentContentChangePartial(where, change.text)


@pytest.mark.parametrize("seed", range(3))
async def test_every_publish_of_an_edit_sequence_is_a_fresh_analysis(tmp_path: Path, seed: int) -> None:
    await _replay(tmp_path, seed, _random_edits)


@pytest.mark.parametrize("seed", range(2))
async def test_every_publish_of_moves_undone_by_whole_texts_is_a_fresh_analysis(
    tmp_path: Path, seed: int
) -> None:
    """Edits that move lines, and their undos, redos and reverts sent as the whole text (as
    several editors' undo, full-sync clients and formatters send a change)."""
    await _replay(tmp_path, seed, _moves_and_whole_texts)


async def test_a_long_file_shows_parts_of_its_diagnostics_while_it_is_first_analysed(tmp_path: Path) -> None:
    root, cache = tmp_path / "project", tmp_path / "cache"
    root.mkdir()
    text = model_source(4000)
    path = root / "model.py"
    path.write_text(text)
    client = await session(root, cache)
    try:
        uri = open_file(client, path, text)
        await settled(client, uri, fresh(root, path, text))
        assert _check_every_publish(client, uri, root, path, {1: text}) >= 1
    finally:
        await client.shutdown_session()


async def test_a_later_session_publishes_the_stored_diagnostics_while_they_hold(tmp_path: Path) -> None:
    (root, cache, path, text, expected), (entry,) = await stored_project(tmp_path)

    # What the next session publishes first comes from the entry: marked, it shows.
    stored = json.loads(entry.read_text())
    stored["diagnostics"][0]["message"] = "from the cache"
    entry.write_text(json.dumps(stored))
    second = await session(root, cache)
    try:
        uri = open_file(second, path, text)
        await settled(second, uri, expected)
        first_sent = next(params for params in second.published if params.uri == uri)
        assert "from the cache" in [d.message for d in first_sent.diagnostics]
    finally:
        await second.shutdown_session()

    # A file the analysis read has changed: the entry no longer holds, and is not published.
    (root / "dims.py").write_text("ROWS = 63\n")
    changed = fresh(root, path, text)
    assert changed != expected
    third = await session(root, cache)
    try:
        uri = open_file(third, path, text)
        await settled(third, uri, changed)
        assert _check_every_publish(third, uri, root, path, {1: text}) >= 1
    finally:
        await third.shutdown_session()
