"""Sessions of a real server on a project that has a persistent cache, and what a fresh analysis
(no cache of any kind) finds, to compare every publish with."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import NamedTuple

from lsp_helpers import HANG, RecordingClient, initialize, open_file, published, server_config
from lsprotocol import types

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis
from shardls.analysis.workspace import Workspace
from shardls.memory.diagnostics import memory_diagnostics
from shardls.server.settings import SettingsStore

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from generate_models import model_source

DIMS = "ROWS = 64\n"
IMPORTS = "from dims import ROWS\n"
PLACED = 'r = jax.device_put(jnp.zeros((ROWS, 1024)), NamedSharding(mesh, P("model", None)))\n'
"""ROWS rows over `model` (4): 64 divide, 63 do not (SH001)."""

Published = list[tuple[int, int, int, int, str, str, int]]

_SEVERITY = {"error": 1, "warning": 2, "info": 3}


def workspace_files(root: Path) -> str:
    """A generated model that also reads a constant from another file; returns its text."""
    (root / "dims.py").write_text(DIMS)
    text = model_source(240).replace("import jax\n", "import jax\n" + IMPORTS, 1) + "\n" + PLACED
    (root / "model.py").write_text(text)
    return text


def as_sent(diagnostics: list[types.Diagnostic]) -> Published:
    return sorted(
        (
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
            str(d.code),
            d.message,
            int(d.severity or 0),
        )
        for d in diagnostics
    )


def fresh_analysis(root: Path, path: Path, text: str) -> FileAnalysis:
    """What a new analyzer, with no cache of any kind, finds in `text`."""
    analyzer = Analyzer(Workspace([root]), producers=(memory_diagnostics,))
    settings = SettingsStore(lambda message: None).for_path(str(path))
    return analyzer.analyze(str(path), text, settings)


def fresh(root: Path, path: Path, text: str) -> Published:
    """The diagnostics of `fresh_analysis` as published (the sources are ASCII, so columns are
    the same in every encoding)."""
    analysis = fresh_analysis(root, path, text)
    return sorted(
        (
            d.span.line,
            d.span.column,
            d.span.end_line,
            d.span.end_column,
            d.code,
            d.message,
            _SEVERITY[d.severity.value],
        )
        for d in analysis.diagnostics
    )


async def session(root: Path, cache: Path) -> RecordingClient:
    client = await server_config(SHARDLS_CACHE_DIR=str(cache)).start()
    assert isinstance(client, RecordingClient)
    await initialize(client, root)
    return client


async def settled(client: RecordingClient, uri: str, want: Published) -> None:
    """Until the latest publish is `want` (a wrong result never gets there: the test fails at HANG)."""
    await published(client, uri, lambda params: as_sent(params.diagnostics) == want)


async def entries(cache: Path) -> list[Path]:
    """The entries of the cache folder, once its first one is written (after the first publish)."""
    deadline = asyncio.get_running_loop().time() + HANG
    while not (found := sorted(cache.rglob("*.json"))):
        assert asyncio.get_running_loop().time() < deadline, "no cache entry was written"
        await asyncio.sleep(0.05)
    return found


class Project(NamedTuple):
    root: Path
    cache: Path
    path: Path
    """The model file, `workspace_files`'s."""
    text: str
    expected: Published
    """What a fresh analysis of the model publishes."""


async def stored_project(tmp_path: Path) -> tuple[Project, list[Path]]:
    """The project of `workspace_files` in `tmp_path`, after a first session opened its model
    and published the fresh analysis; with the cache entries written by then."""
    root, cache = tmp_path / "project", tmp_path / "cache"
    root.mkdir()
    text = workspace_files(root)
    path = root / "model.py"
    expected = fresh(root, path, text)
    first = await session(root, cache)
    try:
        await settled(first, open_file(first, path, text), expected)
        return Project(root, cache, path, text, expected), await entries(cache)
    finally:
        await first.shutdown_session()
