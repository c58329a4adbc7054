"""The persistent cache never costs a session its diagnostics. Whatever the cache folder holds
(entries cut short, rewritten with facts of the wrong shape, garbage, written meanwhile by
`shardls check` or by a second server on the same folder), every session ends with what a fresh
analysis publishes.

The hang these guard against: an entry whose facts made the check of what it rests on raise
(an outcome named by a list: TypeError) ended the publishing job before the analysis was asked,
and the session showed no diagnostics at all until the next edit. Making the entry's key could
fail the same way, for the analysis itself: a shardls source file that vanished between the
listing of the package and its `stat` (a working copy being edited) raised FileNotFoundError.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from pathlib import Path

import pytest
from lsp_helpers import HANG, RecordingClient, open_file, published, send_edits
from lsprotocol import types
from replay_helpers import Published, as_sent, session, stored_project

from shardls.analysis.workspace import WORKSPACE_MESH, Workspace
from shardls.cache.reads import WorkspaceState
from shardls.cli.check_cache import sources_digest

HOSTILE_FACTS: list[object] = [
    ["outcome", ["not", "a", "name"], [], "0"],
    ["outcome", {"a": 1}, [], "0"],
    ["outcome", WORKSPACE_MESH, "not facts", 5],
    ["outcome", WORKSPACE_MESH, [["outcome", ["x"], [], "0"]], "0"],
    ["text", 7, None],
    ["search", ["a"], "0"],
    ["listing"],
    [],
    "a fact",
    None,
]
"""Facts of shapes no shardls writes, each first in an entry's list so that it is the one checked."""
REOPENED = 3
"""The version of the second open of `_reopened`, so that its publishes are told from the first's."""


@pytest.mark.parametrize("fact", HOSTILE_FACTS, ids=repr)
def test_a_fact_of_the_wrong_shape_does_not_hold(tmp_path: Path, fact: object) -> None:
    assert WorkspaceState(Workspace([tmp_path])).holds([fact], lambda name: None) is False


def test_a_source_file_gone_before_its_stat_is_left_out_of_the_build_key(tmp_path: Path) -> None:
    (tmp_path / "module.py").write_text("x = 1\n")
    before = sources_digest(tmp_path)
    (tmp_path / "gone.py").symlink_to(tmp_path / "nowhere.py")  # listed, but its stat fails
    assert sources_digest(tmp_path) == before


RAISED = HOSTILE_FACTS[:2]
"""The facts whose check raised (TypeError: a list or a dict is unhashable)."""
DAMAGES = ("cut short", "garbage", "a hostile fact first", "diagnostics of the wrong shape")


def _damage(cache: Path, damage: str, rng: random.Random) -> None:
    """Each entry of the folder (the server's and check's) damaged the same way."""
    for entry in sorted(cache.rglob("*.json")):
        data = entry.read_bytes()
        if damage == "cut short":
            entry.write_bytes(data[: rng.randrange(len(data))])
        elif damage == "garbage":
            entry.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))))
        else:
            try:
                content = json.loads(data)
            except ValueError:  # damaged in an earlier round and not written since
                continue
            if damage == "a hostile fact first":
                content["dependencies"] = [rng.choice(RAISED), *content["dependencies"]]
            else:
                content["diagnostics"] = [{"span": rng.randrange(9)}]
            entry.write_text(json.dumps(content))


async def _check(root: Path, cache: Path) -> asyncio.subprocess.Process:
    """`shardls check` of the project, writing to the same cache folder as the servers."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-I",
        "-m",
        "shardls",
        "check",
        "-q",
        str(root),
        env={**os.environ, "SHARDLS_CACHE_DIR": str(cache)},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )


def _reopened(client: RecordingClient, path: Path, text: str) -> str:
    """Open the file, edit it at once, close it and open it again as it was, as version 3: the
    stored publish of the first open is pending or under way while the edit and the close come."""
    uri = open_file(client, path, text)
    edit = types.TextEdit(types.Range(types.Position(0, 0), types.Position(0, 0)), "# edited\n")
    send_edits(client, uri, 2, [edit])
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", REOPENED, text))
    )
    return uri


async def _shows(client: RecordingClient, uri: str, version: int, expected: Published) -> None:
    """Until the latest publish is `expected`, for that version (the test fails at HANG)."""
    await published(client, uri, lambda p: p.version == version and as_sent(p.diagnostics) == expected)


@pytest.mark.asyncio
@pytest.mark.parametrize("seed", range(2))
async def test_sessions_on_a_damaged_and_shared_cache_publish_a_fresh_analysis(
    tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    (root, cache, path, text, expected), _ = await stored_project(tmp_path)

    for damage in DAMAGES:
        _damage(cache, damage, rng)
        check = await _check(root, cache)
        # Two servers on the same folder at once, each storing what it analyses.
        clients = [await session(root, cache), await session(root, cache)]
        try:
            opened = open_file(clients[0], path, text)
            reopened = _reopened(clients[1], path, text)
            await asyncio.gather(
                _shows(clients[0], opened, 1, expected), _shows(clients[1], reopened, REOPENED, expected)
            )
        finally:
            for client in clients:
                await client.shutdown_session()
            await asyncio.wait_for(check.wait(), HANG)
