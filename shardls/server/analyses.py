"""The workspace's one Analyzer, run in one worker thread, and the latest result of each unit.

One Analyzer, because its caches (parsed modules, per-segment results with what they read) are
what make re-analysing after a keystroke cheap; one thread, because the Analyzer and its
Workspace are not thread-safe. Everything that touches them, including the editor texts that
override the disk for imports, goes through that thread in order, so an analysis always sees the
texts sent before it. The event loop stays free to read messages meanwhile.

A result is reused while the unit's version, the settings and the `generation` are the same;
`generation` counts changes to any open document, because a unit's results may depend on the
modules it imports.

The first analysis of a file in a session reads everything it depends on (no per-segment result
of it is cached yet), so its diagnostics are stored on disk with those reads (`stored`); the
next session's first publish of the same file takes them from there (`Analyses.stored`).

What the analysis thread keeps is frozen out of the garbage collector's passes once an analysis
has settled, and collected in full at an idle moment after a document closed or what is kept
grew (`collection`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shardls.analysis.facts import FileAnalysis
from shardls.analysis.settings import Settings
from shardls.config import Config
from shardls.server.collection import Collection
from shardls.server.units import Unit

if TYPE_CHECKING:
    from shardls.analysis.analyzer import Analyzer, Progress
    from shardls.analysis.workspace import Workspace
    from shardls.memory.model import Models
    from shardls.server.stored import Stored

ConfigOf = Callable[[str], Config]
"""The configuration that applies to a file (where its cache folder is)."""
Partial = Callable[["Result"], None]
"""Told, in the event loop, the diagnostics found so far by the first analysis of a file."""

PARTIAL_AFTER = 0.05
"""Seconds into a first analysis when the diagnostics found so far are first reported (at the
earliest after the module-level facts: 0.08 s for 5k lines, 0.26 s for 20k); each later report
waits twice as long as the one before. A long file's first problems show soon, and since each
report converts and sends every diagnostic found so far (in the event loop, beside the
analysis), a 20k-line file makes about six, not dozens."""

IDLE_S = 2.0
"""Seconds without an analysis, a change or a request for one (a hover asks for its document's
result) before a due full collection runs (`collection`): it holds the interpreter for ~0.5 s
with a 20k-line file open, so it waits for a pause in typing and hovering (run 2 s after the open
whatever came, it was the server benchmark's hover p95 at 20k lines: 1.9 → 62 ms)."""

_Key = tuple[object, int, Settings]

logger = logging.getLogger("shardls.server")


@dataclass(frozen=True)
class Result:
    unit: Unit
    """The unit exactly as analysed (the editor may have moved on since)."""
    analysis: FileAnalysis


class Analyses:
    def __init__(
        self,
        roots: list[Path],
        config_of: ConfigOf | None = None,
        partial: Partial | None = None,
        collection: Collection | None = None,
    ) -> None:
        """`roots`: the workspace folders, where imports are resolved from. `config_of`: the
        configuration of a file, which says where its results are stored (None: nowhere).
        `partial`: told what the first analysis of a file has found so far (see `_progress`).
        `collection`: when the garbage collector runs (default: `Collection()`)."""
        self._roots = roots
        self._config_of = config_of
        self._partial = partial
        self._analysed: set[str] = set()
        """Files analysed in this session: the analyzer keeps parts of their results, so a later
        analysis does not read everything again and cannot be stored."""
        self._stores: dict[Path, Stored] = {}
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shardls-analysis")
        # The analyzer is imported and built in the worker, off `initialize`'s path: the editor
        # gets its answer as fast as from an empty pygls server, and the import overlaps with it.
        self._workspace: Future[Workspace] = self._executor.submit(_workspace, roots)
        self._analyzer: Analyzer | None = None
        self._latest: dict[str, tuple[_Key, Result]] = {}
        self._models: dict[str, tuple[_Key, Models]] = {}
        self._pending: dict[tuple[str, _Key], asyncio.Future[Result]] = {}
        self._indexed: dict[str, FileAnalysis] = {}
        """The analysis of each file whose lookups were built last (in the analysis thread)."""
        self.generation = 0
        self._collection = collection or Collection()
        self._idle: asyncio.TimerHandle | None = None

    def prepare(self) -> None:
        """Import what reading the persistent cache needs, in the analysis thread, once the
        session has started (after `initialize`'s answer, which it would otherwise delay): the
        editor opens its files next, and a warm open is then no longer waiting for imports."""
        if self._config_of is not None:
            self._executor.submit(importlib.import_module, "shardls.server.stored")

    def set_text(self, path: str, text: str | None) -> None:
        """The editor's text of a file (None: closed, read it from disk again, and what was
        kept of its analysis goes)."""
        self._executor.submit(self._set_text, path, text)
        self.changed()

    def _set_text(self, path: str, text: str | None) -> None:
        workspace = self._workspace.result()
        workspace.set_text(path, text)
        if text is None:
            if self._analyzer is not None:
                self._analyzer.forget(path)
            workspace.forget(path)
            self._indexed.pop(path, None)

    def changed(self) -> None:
        """Something any result may depend on changed (a document, a file on disk)."""
        self.generation += 1

    @property
    def idle(self) -> bool:
        """No analysis is running or queued: new work has nothing to be coalesced with."""
        return not self._pending

    def forget(self, uri: str) -> None:
        """A unit closed: its results go, and a full collection frees what they held (cycles
        among frozen objects included) at the next idle moment."""
        self._latest.pop(uri, None)
        self._models.pop(uri, None)
        self._collection.due = True
        self._when_idle()

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

    async def stored(self, unit: Unit, settings: Settings) -> Result | None:
        """The diagnostics of this version of a file not analysed yet in this session, from the
        persistent cache when they are there and still hold (None otherwise): a result with no
        sites, to publish while the analysis runs."""
        if unit.is_notebook or unit.path in self._analysed or unit.uri in self._latest:
            return None
        config = self._config(unit.path)
        if config is None:
            return None
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._lookup, unit, settings, config)

    async def result(self, unit: Unit, settings: Settings) -> Result:
        """The analysis of this version of the unit: cached, already running, or started now.
        A due full collection waits for a pause in these requests too (`IDLE_S`)."""
        if self._idle is not None:
            self._when_idle()
        key: _Key = (unit.version, self.generation, settings)
        latest = self._latest.get(unit.uri)
        if latest is not None and latest[0] == key:
            return latest[1]
        future = self._pending.get((unit.uri, key))
        if future is None:
            config = None if unit.is_notebook else self._config(unit.path)
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(self._executor, self._analyze, unit, settings, config, loop)
            self._pending[(unit.uri, key)] = future
            future.add_done_callback(lambda done: self._finished(unit.uri, key, done))
        # Shielded: a newer edit cancels the request that waits, not the analysis others share.
        return await asyncio.shield(future)

    def close(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def collected(self) -> None:
        """Collect everything in the analysis thread now (`Collection.full`), after the work
        queued before."""
        await asyncio.get_running_loop().run_in_executor(self._executor, self._collection.full)

    def _when_idle(self) -> None:
        """Run a due full collection once IDLE_S pass without analyses (asked again by each
        settled analysis and each close; without an event loop, nothing is scheduled)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        if self._idle is not None:
            self._idle.cancel()
        self._idle = loop.call_later(IDLE_S, self._idle_now)

    def _idle_now(self) -> None:
        self._idle = None
        if not self.idle:
            self._when_idle()
        elif self._collection.due:
            with contextlib.suppress(RuntimeError):  # the session is shutting down
                self._executor.submit(self._collection.full)

    def _finished(self, uri: str, key: _Key, future: asyncio.Future[Result]) -> None:
        self._pending.pop((uri, key), None)
        if not future.cancelled() and future.exception() is None:
            self._latest[uri] = (key, future.result())

    def _config(self, path: str) -> Config | None:
        return None if self._config_of is None else self._config_of(path)

    def _analyzer_now(self) -> Analyzer:
        if self._analyzer is None:
            from shardls.analysis.analyzer import Analyzer
            from shardls.memory.diagnostics import memory_diagnostics

            self._analyzer = Analyzer(self._workspace.result(), producers=(memory_diagnostics,))
        return self._analyzer

    def _store(self, unit: Unit, settings: Settings, config: Config | None) -> tuple[Stored, str] | None:
        """Where the file's diagnostics are stored, and under which key (None: nowhere).

        Asked before a first analysis: a failure to make the key is logged and means no cache,
        never a failed analysis (the editor would get no diagnostics for the file)."""
        from shardls.server.stored import Stored, cache_folder, entry_key

        folder = None if config is None else cache_folder(unit.path, self._roots, config)
        if folder is None:
            return None
        try:
            key = entry_key(unit.path, self._roots, settings, unit.text)
        except Exception as error:
            logger.warning("No cache for %s: its key failed (%s: %s)", unit.path, type(error).__name__, error)
            return None
        store = self._stores.get(folder)
        if store is None:
            store = self._stores[folder] = Stored(folder)
        return store, key

    def _lookup(self, unit: Unit, settings: Settings, config: Config) -> Result | None:
        place = self._store(unit, settings, config)
        if place is None:
            return None
        store, key = place

        def recompute(name: str) -> object:
            # Only now: an entry that holds as it is is used without importing the analysis.
            return self._analyzer_now().workspace_outcome(name, unit.path, unit.text, settings)

        found = store.lookup(key, self._workspace.result(), unit.path, unit.text, recompute)
        if found is None:
            return None
        diagnostics, device_count = found
        return Result(unit, FileAnalysis(unit.path, (), (), diagnostics, device_count))

    def _analyze(
        self, unit: Unit, settings: Settings, config: Config | None, loop: asyncio.AbstractEventLoop
    ) -> Result:
        from shardls.analysis.workspace import WorkspaceReads

        analyzer = self._analyzer_now()
        first = unit.path not in self._analysed
        place = self._store(unit, settings, config) if first else None
        workspace = analyzer.workspace
        reads = workspace.reads = None if place is None else WorkspaceReads()
        try:
            progress = self._progress(unit, loop) if first else None
            with self._collection.analysing():
                analysis = analyzer.analyze(unit.path, unit.text, settings, progress)
        finally:
            workspace.reads = None
        self._analysed.add(unit.path)
        if place is not None and reads is not None:
            store, key = place
            # After this job: the result goes to the editor first.
            self._executor.submit(
                store.save, key, workspace, reads, analysis.diagnostics, analysis.device_count
            )
        return Result(unit, analysis)

    def index_soon(self, analysis: FileAnalysis) -> None:
        """Build the analysis' per-line lookups in the analysis thread, once its diagnostics are
        sent: a hover asking before it ran builds them itself. Submitted when the analysis
        ended, it ran beside the publish and took the interpreter from it (12 ms of a 20k-line
        file's 4,444 sites per edit). (The executor refuses it once the session is shutting
        down.)

        Then what the analysis left is settled (`Collection.settle`): the diagnostics are sent,
        and the next edit's collections no longer traverse what the analysis keeps."""
        with contextlib.suppress(RuntimeError):
            self._executor.submit(self._index, analysis)
            self._executor.submit(self._collection.settle)
        self._when_idle()

    def _index(self, analysis: FileAnalysis) -> None:
        """In the analysis thread: the lookups of the file's analysis, made from those of the one
        indexed before it where it kept the same sites (`FileAnalysis.index_lines`)."""
        analysis.index_lines(self._indexed.get(analysis.path))
        self._indexed[analysis.path] = analysis

    def _progress(self, unit: Unit, loop: asyncio.AbstractEventLoop) -> Progress | None:
        """What the first analysis of a file reports as it goes (at PARTIAL_AFTER seconds, then
        after twice as long each time): the diagnostics found so far when there are more than
        last time, handed to the event loop
        (where they come before the analysis' own result). Later analyses are quick (the
        analyzer's caches), and a part of their diagnostics would hide some the editor shows."""
        partial = self._partial
        if partial is None:
            return None
        wait = PARTIAL_AFTER
        due = time.monotonic() + wait
        reported = 0

        def progress(so_far: Callable[[], FileAnalysis]) -> None:
            nonlocal wait, due, reported
            if time.monotonic() < due:
                return
            wait *= 2
            due = time.monotonic() + wait
            analysis = so_far()
            if len(analysis.diagnostics) > reported:
                reported = len(analysis.diagnostics)
                loop.call_soon_threadsafe(partial, Result(unit, analysis))

        return progress


def _workspace(roots: list[Path]) -> Workspace:
    from shardls.analysis.workspace import Workspace

    return Workspace(roots)
