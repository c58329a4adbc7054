"""The workspace's one Analyzer, run in one worker thread, and the latest result of each unit.

One Analyzer, because its caches (parsed modules, per-segment results with what they read) are
what make re-analysing after a keystroke cheap; one thread, because the Analyzer and its
Workspace are not thread-safe. Everything that touches them, including the editor texts that
override the disk for imports, goes through that thread in order, so an analysis always sees the
texts sent before it. The event loop stays free to read messages meanwhile.

A result is reused while the unit's version, the settings and the `generation` are the same;
`generation` counts changes to any open document, because a unit's results may depend on the
modules it imports.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shardls.analysis.facts import FileAnalysis
from shardls.analysis.settings import Settings
from shardls.server.units import Unit

if TYPE_CHECKING:
    from shardls.analysis.analyzer import Analyzer
    from shardls.analysis.workspace import Workspace
    from shardls.memory.model import Models

_Key = tuple[object, int, Settings]


@dataclass(frozen=True)
class Result:
    unit: Unit
    """The unit exactly as analysed (the editor may have moved on since)."""
    analysis: FileAnalysis


class Analyses:
    def __init__(self, roots: list[Path]) -> None:
        """`roots`: the workspace folders, where imports are resolved from."""
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shardls-analysis")
        # The analyzer is imported and built in the worker, off `initialize`'s path: the editor
        # gets its answer as fast as from an empty pygls server, and the import overlaps with it.
        self._workspace: Future[Workspace] = self._executor.submit(_workspace, roots)
        self._analyzer: Analyzer | None = None
        self._latest: dict[str, tuple[_Key, Result]] = {}
        self._models: dict[str, tuple[_Key, Models]] = {}
        self._pending: dict[tuple[str, _Key], asyncio.Future[Result]] = {}
        self.generation = 0

    def set_text(self, path: str, text: str | None) -> None:
        """The editor's text of a file (None: closed, read it from disk again)."""
        self._executor.submit(lambda: self._workspace.result().set_text(path, text))
        self.changed()

    def changed(self) -> None:
        """Something any result may depend on changed (a document, a file on disk)."""
        self.generation += 1

    @property
    def idle(self) -> bool:
        """No analysis is running or queued: new work has nothing to be coalesced with."""
        return not self._pending

    def forget(self, uri: str) -> None:
        self._latest.pop(uri, None)
        self._models.pop(uri, None)

    async def models(self, unit: Unit, settings: Settings) -> Models:
        """Whole-model memory (code lenses, class hovers) of this version of the unit: computed in
        the analysis thread on demand, since it walks every model's `__init__` again."""
        key: _Key = (unit.version, self.generation, settings)
        cached = self._models.get(unit.uri)
        if cached is not None and cached[0] == key:
            return cached[1]
        models = await asyncio.get_running_loop().run_in_executor(
            self._executor, self._file_models, unit, settings
        )
        self._models[unit.uri] = (key, models)
        return models

    def _file_models(self, unit: Unit, settings: Settings) -> Models:
        from shardls.memory.discover import file_models

        return file_models(self._workspace.result(), unit.path, unit.text, settings)

    async def result(self, unit: Unit, settings: Settings) -> Result:
        """The analysis of this version of the unit: cached, already running, or started now."""
        key: _Key = (unit.version, self.generation, settings)
        latest = self._latest.get(unit.uri)
        if latest is not None and latest[0] == key:
            return latest[1]
        future = self._pending.get((unit.uri, key))
        if future is None:
            future = asyncio.get_running_loop().run_in_executor(self._executor, self._analyze, unit, settings)
            self._pending[(unit.uri, key)] = future
            future.add_done_callback(lambda done: self._finished(unit.uri, key, done))
        # Shielded: a newer edit cancels the request that waits, not the analysis others share.
        return await asyncio.shield(future)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

    def _finished(self, uri: str, key: _Key, future: asyncio.Future[Result]) -> None:
        self._pending.pop((uri, key), None)
        if not future.cancelled() and future.exception() is None:
            self._latest[uri] = (key, future.result())

    def _analyze(self, unit: Unit, settings: Settings) -> Result:
        if self._analyzer is None:
            from shardls.analysis.analyzer import Analyzer
            from shardls.memory.diagnostics import memory_diagnostics

            self._analyzer = Analyzer(self._workspace.result(), producers=(memory_diagnostics,))
        analysis = self._analyzer.analyze(unit.path, unit.text, settings)
        analysis.index_lines()
        return Result(unit, analysis)


def _workspace(roots: list[Path]) -> Workspace:
    from shardls.analysis.workspace import Workspace

    return Workspace(roots)
