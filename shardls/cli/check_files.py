"""Analyse many files: read each (Python or notebook), analyse it, and keep what outputs need.

Files are analysed in worker processes when there are enough of them to repay starting the
workers; a few files are analysed in this process. Whatever a file holds, its result is a
`FileReport`: an unreadable file, text that is not UTF-8 or a broken notebook becomes an SH210
diagnostic, and a crash of the analyzer on one file is reported for that file and does not stop
the others.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shardls.analysis.facts import Diagnostic, Related, Site, Span
from shardls.analysis.recognizers import load as load_recognizers
from shardls.analysis.settings import Settings
from shardls.analysis.workspace import Workspace, WorkspaceReads
from shardls.cli import check_cache
from shardls.cli.check_cache import CachedResult
from shardls.cli.collector import collected_by_file, settle
from shardls.core import Severity
from shardls.files import (
    MAX_READ_BYTES,
    RefusedFile,
    decode_source,
    display_path,
    read_workspace_file,
    source_lines,
)
from shardls.frames import in_roomy_frame
from shardls.notebook import Notebook, NotebookError, read_notebook

if TYPE_CHECKING:
    from shardls.analysis.analyzer import Analyzer

PARALLEL_MIN_FILES = 16
"""Below this, starting worker processes costs more than it saves."""
PARALLEL_MIN_BYTES = 256_000
"""Source each worker process must get for starting it to pay. A worker costs 0.05-0.1 s of CPU
(the fork, and parsing again the modules its files import) and saves no wall time on work that
short: EasyLM's 19 files (159 kB, 0.3 s of analysis) took 14% more CPU in two workers than in one
process, in the same time."""

UNREADABLE = "SH210"
NOTEBOOK_READ_BYTES = 64_000_000
"""Notebooks carry their outputs (images, tables): their code cells, not their bytes, meet the
analysis's size bounds."""


@dataclass(frozen=True)
class CheckJob:
    path: Path
    display: str
    """The path as outputs print it (relative to the working directory when under it)."""
    settings: Settings
    roots: tuple[Path, ...]
    """Workspace roots for resolving the file's imports."""
    data: bytes | None = None
    """The file's content when it does not come from `path` (standard input)."""
    cache_dir: Path | None = None
    """Where its result may be cached (None: nowhere, as with --no-cache). Never used with
    `data`: only a file's own content keys its entry."""

    @property
    def cached(self) -> bool:
        return self.cache_dir is not None and self.data is None


@dataclass(frozen=True)
class Location:
    """A 1-based position as people and tools read it; `cell` is set for notebooks."""

    cell: int | None
    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def of(cls, span: Span, cell: int | None = None, line: int | None = None) -> Location:
        """`line` is the 0-based line to show for the span's first line (in a notebook, within its cell)."""
        first = span.line if line is None else line
        return cls(
            cell, first + 1, span.column + 1, first + 1 + span.end_line - span.line, span.end_column + 1
        )


@dataclass(frozen=True)
class FileReport:
    path: str
    """As outputs print it."""
    file: str
    """As the analyzer was given it (absolute), which is how related locations name this file."""
    lines: tuple[str, ...]
    """The analysed text by line (a notebook's code cells joined), for source excerpts."""
    notebook: Notebook | None
    diagnostics: tuple[Diagnostic, ...]
    sites: tuple[Site, ...]
    internal_error: str | None = None
    suppressed: tuple[Diagnostic, ...] = ()
    """Silenced by a suppression comment: only SARIF shows them (as suppressed in source)."""

    def locate(self, span: Span) -> Location:
        """1-based columns in Python characters; notebook lines count from the top of their cell."""
        if self.notebook is None:
            return Location.of(span)
        return Location.of(span, *self.notebook.locate(span.line))

    def related_location(self, related: Related) -> tuple[str, Location]:
        """Where a related note points: in this file, or in another one (shown by its own path)."""
        if related.path is None or related.path == self.file:
            return self.path, self.locate(related.span)
        return display_path(Path(related.path)), Location.of(related.span)


def check_files(jobs: Sequence[CheckJob]) -> list[FileReport]:
    """One report per job, in the jobs' order. The disk is read afresh by each call (`--watch`
    calls it again), and is taken not to change during it (`Workspace.snapshot`).

    A job whose result is in the persistent cache (`check_cache`) is not analysed; the others
    are, and store their results. With the cache in use, no analysis is kept in memory between
    calls, so that each one notes everything it reads.

    Everything runs below one roomy frame (`in_roomy_frame`), which workers forked meanwhile
    inherit: the analysis's recursion never maps and unmaps frame memory. The garbage collector
    runs once after each file (`collector`)."""
    with collected_by_file():
        return in_roomy_frame(_check_files, jobs)


def _check_files(jobs: Sequence[CheckJob]) -> list[FileReport]:
    check_cache.new_run()
    if any(job.cached for job in jobs):
        forget_analyses()
    for analyzer in _ANALYZERS.values():
        analyzer.workspace.refresh()
    reports: list[FileReport | None] = [_from_cache(job) if job.cached else None for job in jobs]
    missing = [job for job, report in zip(jobs, reports, strict=True) if report is None]
    analysed = iter(_analyse(missing))
    done = [report if report is not None else next(analysed) for report in reports]
    check_cache.prune(job.cache_dir for job in missing if job.cache_dir is not None and job.cached)
    return done


def _analyse(jobs: Sequence[CheckJob]) -> list[FileReport]:
    workers = worker_count(jobs)
    if workers == 1:
        return [_check_and_settle(job) for job in jobs]
    from shardls.cli.workers import in_workers  # only here: its imports are start-up time

    return in_workers(_check_and_settle, jobs, workers, _prepare_to_fork)


def _check_and_settle(job: CheckJob) -> FileReport:
    """`check_file`, then the garbage collection of what it left (`collector.settle`)."""
    report = check_file(job)
    settle()
    return report


def worker_count(jobs: Sequence[CheckJob]) -> int:
    """How many processes analyse the jobs: one per processor, at most one per
    PARALLEL_MIN_BYTES of source, and 1 (this process, no worker) for fewer than
    PARALLEL_MIN_FILES files."""
    processors = os.cpu_count() or 1
    if len(jobs) < PARALLEL_MIN_FILES or processors == 1:
        return 1
    size = sum(_size(job) for job in jobs)
    return max(1, min(processors, len(jobs), size // PARALLEL_MIN_BYTES))


def _size(job: CheckJob) -> int:
    """The job's bytes (0 when the file cannot be read: its analysis only reports that)."""
    if job.data is not None:
        return len(job.data)
    try:
        return job.path.stat().st_size
    except OSError:
        return 0


def _prepare_to_fork(jobs: Sequence[CheckJob]) -> None:
    """Do here, once, what every forked worker would otherwise do again: index each workspace,
    import the recognizers, the library's models and the scope builder (the analysis imports
    them when it first needs them: 20 ms a worker), and freeze the heap, so that the workers'
    collections leave its pages shared (`collector.settle`)."""
    from shardls.analysis import module_versions, scope_edit  # noqa: F401  (imported by the first parse)
    from shardls.analysis.library import registry

    _index_workspaces(jobs)
    load_recognizers()
    registry.tables()  # imports the library's modules, which register their handlers
    settle()


def _index_workspaces(jobs: Sequence[CheckJob]) -> None:
    """Index each workspace once, here, before the workers fork: they inherit it, instead of
    each searching the whole workspace for its meshes again (`Analyzer.index_workspace`)."""
    for roots, settings in dict.fromkeys((job.roots, job.settings) for job in jobs if job.data is None):
        try:
            _analyzer(roots).index_workspace(settings)
        except Exception:  # a bug in shardls: each file then searches on its own, and reports it
            continue


def _from_cache(job: CheckJob) -> FileReport | None:
    """The job's report from the persistent cache, or None (not there, or out of date)."""
    assert job.cache_dir is not None
    try:
        text, notebook = read_source(job.path, None, job.roots)
    except UnreadableSource:
        return None  # analysed as usual, which reports why
    lines = source_lines(text)
    key = check_cache.entry_key(job.path, job.roots, job.settings, text)

    def recompute(name: str) -> object:
        return _analyzer(job.roots).workspace_outcome(name, str(job.path), text, job.settings)

    found = check_cache.lookup(job.cache_dir, key, job.roots, job.path, text, len(lines), recompute)
    if found is None:
        return None
    return FileReport(
        job.display,
        str(job.path),
        lines,
        notebook,
        found.diagnostics,
        found.sites,
        suppressed=found.suppressed,
    )


class UnreadableSource(Exception):
    """The file cannot be analysed as text; the message says why, for an SH210 diagnostic.

    `severity`: an error when Python could not read it either (bytes invalid in its encoding, a
    broken notebook); a warning when only shardls declines it (a size limit, a special file, a
    link out of the workspace): the code may be fine, so CI must not fail on it."""

    def __init__(self, reason: str, severity: Severity = Severity.ERROR) -> None:
        super().__init__(reason)
        self.severity = severity


def check_file(job: CheckJob) -> FileReport:
    try:
        text, notebook = read_source(job.path, job.data, job.roots)
    except UnreadableSource as error:
        return _unreadable(job, str(error), error.severity)
    lines = source_lines(text)
    analyzer = _analyzer(job.roots)
    reads = analyzer.workspace.reads = WorkspaceReads() if job.cached else None
    try:
        analysis = analyzer.analyze(str(job.path), text, job.settings)
    except Exception as error:  # a bug in shardls must not cost the user the results of other files
        return FileReport(
            job.display, str(job.path), lines, notebook, (), (), f"{type(error).__name__}: {error}"
        )
    finally:
        analyzer.workspace.reads = None
    if reads is not None and job.cache_dir is not None:
        key = check_cache.entry_key(job.path, job.roots, job.settings, text)
        result = CachedResult(analysis.diagnostics, analysis.sites, analysis.suppressed)
        check_cache.save(job.cache_dir, key, job.roots, result, reads)
    return FileReport(
        job.display,
        str(job.path),
        lines,
        notebook,
        analysis.diagnostics,
        analysis.sites,
        suppressed=analysis.suppressed,
    )


def read_source(
    path: Path, data: bytes | None = None, roots: Sequence[Path] = ()
) -> tuple[str, Notebook | None]:
    """The text to analyse: the file's (or `data`, read from elsewhere for `path`), or a
    notebook's code cells; raises UnreadableSource. The file is read as a workspace file of
    `roots` (`read_workspace_file`), Python source in its PEP 263 encoding, notebooks as UTF-8."""
    try:
        is_notebook = path.suffix == ".ipynb"
        limit = NOTEBOOK_READ_BYTES if is_notebook else MAX_READ_BYTES
        raw = read_workspace_file(path, roots, limit) if data is None else data
        text = raw.decode("utf-8-sig") if is_notebook else decode_source(raw)
        notebook = read_notebook(text) if is_notebook else None
    except RefusedFile as error:
        raise UnreadableSource(f"shardls does not read the file: {error}", Severity.WARNING) from None
    except OSError as error:
        raise UnreadableSource(f"cannot read the file: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise UnreadableSource(
            f"cannot read the file as {_encoding(error.encoding)} text: {error.reason} at byte {error.start}"
        ) from None
    except SyntaxError as error:  # an unknown coding line, or one a byte-order mark contradicts
        raise UnreadableSource(f"cannot read the file: {error.msg}") from None
    except NotebookError as error:
        raise UnreadableSource(str(error)) from None
    return (text, None) if notebook is None else (notebook.text, notebook)


def _encoding(name: str) -> str:
    """`UTF-8` as people write it; a coding line's encoding as the file names it."""
    return "UTF-8" if name.startswith("utf-8") else name


def _unreadable(job: CheckJob, reason: str, severity: Severity) -> FileReport:
    diagnostics = (
        (Diagnostic(Span(0, 0, 0, 0), UNREADABLE, severity, reason),)
        if job.settings.enabled(UNREADABLE)
        else ()
    )
    return FileReport(job.display, str(job.path), (), None, diagnostics, ())


_ANALYZERS: dict[tuple[Path, ...], Analyzer] = {}
"""One analyzer per workspace and process, so parsed imports are shared by the files that use them."""


def forget_analyses() -> None:
    """Drop every cached analysis (`--no-cache`: each re-check of `--watch` starts afresh)."""
    _ANALYZERS.clear()


def _analyzer(roots: tuple[Path, ...]) -> Analyzer:
    """Imported here: a check whose every file comes from the cache never loads the analyzer."""
    from shardls.analysis.analyzer import Analyzer
    from shardls.memory.diagnostics import memory_diagnostics

    analyzer = _ANALYZERS.get(roots)
    if analyzer is None:
        workspace = Workspace(list(roots), snapshot=True)
        analyzer = _ANALYZERS[roots] = Analyzer(workspace, producers=(memory_diagnostics,))
    return analyzer
