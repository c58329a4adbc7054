"""The persistent cache of `shardls check`: each file's diagnostics and sites, kept on disk and
reused while nothing they were computed from has changed.

An entry is found by a key of everything the analysis of a file starts from: shardls's version
and build, the cache format, the Python version, the file's path and workspace roots, the
settings that apply to it and its text. It holds the result and what the analysis read of the
rest of the workspace (`shardls.cache.reads`): an entry is used only if every file it read still
has the same content hash, the same files exist, and, when the analysis listed the workspace
(for the scripts that build a model), the workspace's files are all unchanged. The search for
the workspace's only mesh is kept by its result: when a file it read changed, the search runs
again, and the entry holds if the mesh found is the same. So a result from the cache is the
result an analysis would give now.

Entries are JSON, decoded by type (`shardls.cache.codec`): a hostile entry can at worst make
one file's report wrong-looking, never run code. Standard input and the re-analyses of `--fix`
are not cached (`CheckJob.data`): there is no file whose content keys them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import shardls
from shardls import __version__
from shardls.analysis.facts import Diagnostic, Site, Span
from shardls.analysis.settings import Settings
from shardls.analysis.workspace import WorkspaceReads, too_large
from shardls.cache.codec import CodecError, decode, encode
from shardls.cache.reads import Recompute, WorkspaceState, dependencies, workspace_for
from shardls.cache.store import CACHE_DIR_NAME, CacheStore

CACHE_FORMAT = 3
"""Bumped whenever what an entry holds, or how it is keyed, changes."""

CACHE_DIR_VARIABLE = "SHARDLS_CACHE_DIR"


@dataclass(frozen=True)
class CachedResult:
    """What `check` keeps of one file's analysis (the rest of a FileReport comes from reading it)."""

    diagnostics: tuple[Diagnostic, ...]
    sites: tuple[Site, ...]
    suppressed: tuple[Diagnostic, ...]


_STORES: dict[Path, CacheStore] = {}
_STATES: dict[tuple[Path, ...], WorkspaceState] = {}


def new_run() -> None:
    """The disk may have changed since the last check (`--watch`): read it afresh."""
    _STATES.clear()


def entry_key(path: Path, roots: Sequence[Path], settings: Settings, text: str) -> str:
    """Everything the analysis of `text` as the file `path` starts from, hashed."""
    where = json.dumps(
        [
            CACHE_FORMAT,
            _build(),
            str(path),
            os.path.abspath(path),  # a relative path names another file from another folder
            [str(root) for root in roots],
        ],
        sort_keys=True,
    )
    header = f"{where[:-1]}, {_settings_json(settings)}]"  # what json.dumps gives with them in the list
    digest = hashlib.sha256(header.encode("utf-8", "surrogatepass"))
    digest.update(b"\0")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def lookup(
    cache_dir: Path,
    key: str,
    roots: Sequence[Path],
    path: Path,
    text: str,
    lines: int,
    recompute: Recompute | None = None,
) -> CachedResult | None:
    """The result stored under `key` if what it was computed from still holds; None otherwise
    (no entry, a malformed one, or a file it read has changed). `text` is the file's, as
    analysed: for a Python file within the size bounds, what the workspace reads of it too.
    `recompute` gives the result of a computation over the workspace (the search for its only
    mesh) now, for an entry that rests on it when something the computation read changed."""
    entry = _store(cache_dir).read(key)
    if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT:
        return None
    state = _state(roots)
    if path.suffix == ".py" and too_large(text) is None:
        state.know(str(path), text)
    if not state.holds(entry.get("dependencies"), recompute):
        return None
    try:
        result = CachedResult(
            decode(tuple[Diagnostic, ...], entry.get("diagnostics")),
            decode(tuple[Site, ...], entry.get("sites")),
            decode(tuple[Diagnostic, ...], entry.get("suppressed")),
        )
    except CodecError:
        return None
    return result if _spans_fit(result, str(path), lines) else None


def save(
    cache_dir: Path, key: str, roots: Sequence[Path], result: CachedResult, reads: WorkspaceReads
) -> None:
    """Store `result` under `key` with what its analysis read (nothing when it cannot be encoded
    or the cache folder is not writable)."""
    try:
        entry = {
            "format": CACHE_FORMAT,
            "dependencies": dependencies(reads, _state(roots)),
            "diagnostics": encode(tuple[Diagnostic, ...], result.diagnostics),
            "sites": encode(tuple[Site, ...], result.sites),
            "suppressed": encode(tuple[Diagnostic, ...], result.suppressed),
        }
    except CodecError:
        return
    _store(cache_dir).write(key, entry)


def prune(cache_dirs: Iterable[Path]) -> None:
    """Keep each cache folder within its size bound."""
    for folder in set(cache_dirs):
        _store(folder).prune()


def cache_dir_of(flag: Path | None, configured: Path | None, project: Path) -> Path:
    """Where the cache lives, as in ruff: `--cache-dir`, else SHARDLS_CACHE_DIR, else the
    configuration's `cache-dir`, else `.shardls_cache` in the project's folder."""
    if flag is not None:
        return Path(os.path.abspath(flag))
    variable = os.environ.get(CACHE_DIR_VARIABLE)
    if variable:
        return Path(os.path.abspath(variable))
    if configured is not None:
        return configured
    return project / CACHE_DIR_NAME


def _store(folder: Path) -> CacheStore:
    store = _STORES.get(folder)
    if store is None:
        store = _STORES[folder] = CacheStore(folder)
    return store


def _state(roots: Sequence[Path]) -> WorkspaceState:
    key = tuple(roots)
    state = _STATES.get(key)
    if state is None:
        state = _STATES[key] = WorkspaceState(workspace_for(roots))
    return state


@functools.lru_cache(maxsize=64)
def _settings_json(settings: Settings) -> str:
    """The settings as JSON, once per settings of a run (every file of a folder has the same)."""
    return json.dumps(encode(Settings, settings), sort_keys=True)


@functools.cache
def _build() -> list[object]:
    """shardls's version, and the size and time of each of its source files, so that a changed
    shardls (a new release, or a working copy being edited) never reads another's entries."""
    return [__version__, list(sys.version_info[:2]), sources_digest(Path(shardls.__file__).parent)]


def sources_digest(package: Path) -> str:
    """A hash of the path, size and time of each source file below `package`.

    A file listed but gone by the time it is looked at (a working copy being edited, an editor's
    temporary `.py` file saved and renamed away) is left out as if never listed: its `stat`
    raised here once, which failed the key, so the server's first analysis of a file and its
    publish in that session."""
    files = []
    for folder, subfolders, names in os.walk(package):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                try:
                    status = os.stat(os.path.join(folder, name))
                except OSError:
                    continue
                files.append(
                    f"{os.path.relpath(os.path.join(folder, name), package)}:{status.st_size}:{status.st_mtime_ns}"
                )
    return hashlib.sha256("\n".join(files).encode()).hexdigest()


def _spans_fit(result: CachedResult, path: str, lines: int) -> bool:
    """Whether every position in this file lies within its text (an entry not written for it
    could otherwise point past its end)."""
    last = max(lines - 1, 0)
    spans: list[Span | None] = []
    for diagnostic in (*result.diagnostics, *result.suppressed):
        spans.append(diagnostic.span)
        spans.extend(r.span for r in diagnostic.related if r.path is None or r.path == path)
    for site in result.sites:
        spans += [site.span, site.spec_span]
    return all(
        span is None
        or (0 <= span.line <= span.end_line <= last and span.column >= 0 and span.end_column >= 0)
        for span in spans
    )
