"""The server's persistent cache: each file's diagnostics, kept on disk after a fresh analysis,
so that opening the file again, in a later session, shows them before anything is analysed.

It is `shardls check`'s cache, used the same way: the same folder (`check_cache.cache_dir_of`:
SHARDLS_CACHE_DIR, the configuration's `cache-dir`, else `.shardls_cache` in the project, which
here is the configuration file's folder, else the workspace folder holding the file; a file in
neither gets no cache, so nothing is ever written where `check` would not write), the same store
(atomic writes, size-bounded, pruned, safe to delete), the same version key (shardls's build, the
settings, the roots, the file's path and text: `check_cache.entry_key`) and the same facts of what
the analysis read (`shardls.cache.reads`), checked against the server's workspace, in which the
editor's texts of open files stand for the disk's. An entry is used only if every one still
holds, so what it gives is what the analysis would give now; the analysis then runs all the same
(its caches make the following edits cheap) and its diagnostics replace these, equal by then.

The server's entries are its own (a key derived from check's): a check entry holds every site
of the file (5 MB for 20k lines, 0.4 s to decode), where a first publish needs the diagnostics
only (0.7 MB, 20 ms).
"""

from __future__ import annotations

import gc
import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from shardls.analysis.facts import DeviceCount, Diagnostic, Span
from shardls.analysis.settings import Settings
from shardls.analysis.workspace import Workspace, WorkspaceReads
from shardls.cache.codec import CodecError, Json, decode, encode
from shardls.cache.reads import WorkspaceState, dependencies
from shardls.cache.store import CacheStore
from shardls.cli import check_cache
from shardls.config import Config

FORMAT = 1
"""Bumped whenever what a server entry holds changes (check's format and build are in the key)."""

Recompute = Callable[[str], object]


def cache_folder(path: str, roots: Sequence[Path], config: Config) -> Path | None:
    """Where `check` would keep the file's results when run from its project; None when the
    file lies in no project (no configuration file above it, outside the workspace folders) and
    no folder is named for the cache."""
    project = config.root or next((root for root in roots if _under(path, root)), None)
    if project is None and config.cache_dir is None and not os.environ.get(check_cache.CACHE_DIR_VARIABLE):
        return None
    return check_cache.cache_dir_of(None, config.cache_dir, project or Path(os.path.dirname(path)))


def _under(path: str, root: Path) -> bool:
    try:
        return os.path.commonpath([os.path.abspath(path), os.path.abspath(root)]) == os.path.abspath(root)
    except ValueError:  # another drive
        return False


class Stored:
    """The server's entries in one cache folder."""

    def __init__(self, folder: Path) -> None:
        self.store = CacheStore(folder)

    def lookup(
        self, key: str, workspace: Workspace, path: str, text: str, recompute: Recompute
    ) -> tuple[tuple[Diagnostic, ...], DeviceCount] | None:
        """The diagnostics stored under `key` if everything they were computed from still holds
        in `workspace` now (None: no entry, a malformed one, or one that no longer holds)."""
        entry = self.store.read(key)
        if not isinstance(entry, dict) or entry.get("format") != FORMAT:
            return None
        state = WorkspaceState(workspace)
        state.know(path, text)
        if not state.holds(entry.get("dependencies"), recompute):
            return None
        try:
            diagnostics = decode(tuple[Diagnostic, ...], entry.get("diagnostics"))
            device_count = decode(DeviceCount, entry.get("device_count"))
        except CodecError:
            return None
        lines = text.count("\n") + text.count("\r") - text.count("\r\n") + 1
        return (diagnostics, device_count) if _fit(diagnostics, lines) else None

    def save(
        self,
        key: str,
        workspace: Workspace,
        reads: WorkspaceReads,
        diagnostics: tuple[Diagnostic, ...],
        device_count: DeviceCount,
    ) -> None:
        """Store the diagnostics of a fresh analysis with what it read (nothing when they cannot
        be encoded or the folder is not writable), then keep the folder within its bound.

        The cyclic garbage collector is paused meanwhile, as during the analysis: encoding
        allocates many small objects beside the analysis' hundreds of thousands, and the full
        collections they set off made storing 1,270 diagnostics take 0.57 s instead of 0.03 s."""
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            entry: Json = {
                "format": FORMAT,
                "dependencies": dependencies(reads, WorkspaceState(workspace)),
                "diagnostics": encode(tuple[Diagnostic, ...], diagnostics),
                "device_count": encode(DeviceCount, device_count),
            }
            self.store.write(key, entry)
        except CodecError:
            return
        finally:
            if was_enabled:
                gc.enable()
        self.store.prune()


def entry_key(path: str, roots: Sequence[Path], settings: Settings, text: str) -> str:
    """Check's key of the analysis of `text` as `path`, made the server's own."""
    check_key = check_cache.entry_key(Path(path), roots, settings, text)
    return hashlib.sha256(f"server {FORMAT} {check_key}".encode()).hexdigest()


def _fit(diagnostics: tuple[Diagnostic, ...], lines: int) -> bool:
    """Whether every position lies within the text (an entry not written for it could point
    past its end)."""
    spans: list[Span] = [d.span for d in diagnostics]
    spans += [r.span for d in diagnostics for r in d.related if r.path is None]
    return all(0 <= s.line <= s.end_line < lines and s.column >= 0 and s.end_column >= 0 for s in spans)
