"""A cache directory on disk, as ruff keeps `.ruff_cache/`: entries are JSON files named by their
key, written atomically, read defensively, pruned oldest first beyond a size bound.

Every failure is quiet by design. A folder that cannot be created or written means no cache
(the check runs as without one); an entry that cannot be read, parsed or is not what it should
be is a miss; two processes writing the same entry at once each replace it whole, so a reader
sees one or the other, never a mix. The directory is safe to delete at any time.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path

from shardls import __version__
from shardls.cache.codec import Json
from shardls.files import RefusedFile, read_workspace_file

CACHE_DIR_NAME = ".shardls_cache"
MAX_CACHE_BYTES = 256 * 2**20
"""When the entries of a cache directory take more than this, the oldest (by last use) are
removed until they take at most PRUNED_TO of it."""
PRUNED_TO = 0.8
MAX_ENTRY_BYTES = 64 * 2**20
"""An entry larger than this is not read (it is no entry shardls wrote for a file it analyses)."""

_GITIGNORE = "# Created by shardls: everything here is a cache and may be deleted.\n*\n"
_CACHEDIR_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by shardls.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n"
)
_ENTRY_SUFFIX = ".json"
_TEMP_PREFIX = ".tmp-"
_OURS = re.compile(r"[0-9a-f]{64}\.json|\.tmp-\w+")
"""The only names pruning removes: a cache directory may be named by a hostile configuration,
so nothing but what shardls writes there is ever deleted."""


class CacheStore:
    """The entries of one cache directory, under a folder per shardls version."""

    def __init__(self, root: Path, max_bytes: int = MAX_CACHE_BYTES) -> None:
        self.root = root
        self.folder = root / __version__
        self.max_bytes = max_bytes
        self.writable: bool | None = None
        """None until the first write tries; False when that failed (no more attempts)."""
        self.wrote = False

    def read(self, key: str) -> Json | None:
        """The entry stored under `key`, or None (missing, unreadable, too large, not JSON)."""
        path = self._path(key)
        try:
            entry = json.loads(read_workspace_file(path, (self.root,), MAX_ENTRY_BYTES))
        except (RefusedFile, OSError, ValueError, RecursionError):
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # last use, for pruning
        return entry

    def write(self, key: str, entry: Json) -> None:
        """Store `entry` under `key` (replacing any), or do nothing when the folder is not writable."""
        if not self._prepare():
            return
        try:
            # ASCII: a name with a lone surrogate (a file's undecodable byte) stays writable.
            text = json.dumps(entry, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError):
            return
        target = self._path(key)
        try:
            target.parent.mkdir(exist_ok=True)
            descriptor, temporary = _temporary_file(target.parent)
        except OSError:
            self.writable = False
            return
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
                stream.write(text)
            os.replace(temporary, target)
            self.wrote = True
        except (OSError, ValueError):
            self.writable = False
            with contextlib.suppress(OSError):
                os.unlink(temporary)

    def prune(self) -> None:
        """Remove the least recently used entries (and stale temporary files) beyond the bound."""
        entries: list[tuple[float, int, str]] = []
        try:
            for folder in os.scandir(self.root):
                if folder.is_dir(follow_symlinks=False):
                    entries.extend(_entries(folder.path))
        except OSError:
            return
        total = sum(size for _, size, _ in entries)
        if total <= self.max_bytes:
            return
        for _, size, path in sorted(entries):
            if total <= self.max_bytes * PRUNED_TO:
                break
            with contextlib.suppress(OSError):
                os.unlink(path)
            total -= size

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / (key + _ENTRY_SUFFIX)

    def _prepare(self) -> bool:
        """Create the folder, marked as a cache to git and to backup tools, on the first write
        (and again if it was deleted meanwhile); False when it cannot be written."""
        if self.writable is False:
            return False
        if self.writable and self.folder.is_dir():
            return True
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            for name, text in ((".gitignore", _GITIGNORE), ("CACHEDIR.TAG", _CACHEDIR_TAG)):
                if not (self.root / name).exists():
                    _write_atomically(self.root / name, text)
            self.folder.mkdir(exist_ok=True)
        except OSError:
            self.writable = False
            return False
        self.writable = True
        return True


def _entries(folder: str) -> list[tuple[float, int, str]]:
    """(last use, size, path) of every entry (or temporary file) below `folder`, two levels down."""
    found = []
    for sub in os.scandir(folder):
        if not sub.is_dir(follow_symlinks=False):
            continue
        for item in os.scandir(sub.path):
            if _OURS.fullmatch(item.name) and item.is_file(follow_symlinks=False):
                status = item.stat(follow_symlinks=False)
                found.append((status.st_mtime, status.st_size, item.path))
    return found


def _write_atomically(path: Path, text: str) -> None:
    descriptor, temporary = _temporary_file(path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _temporary_file(folder: Path) -> tuple[int, str]:
    """A new file of ours in `folder`, open (its descriptor) and its path. `tempfile` is
    imported here: with what it imports (`shutil`, `random`) it is 5 ms of start-up, and a
    warm check writes nothing."""
    import tempfile

    return tempfile.mkstemp(prefix=_TEMP_PREFIX, dir=folder)
