"""Which files a check reads (Python files and notebooks under the given paths), and the one
way every workspace file is read.

Folders are walked (symlinked folders are not followed, so a link cannot loop), skipping
DEFAULT_SKIPPED_DIRS, whatever the `exclude` patterns match and what `.gitignore` files ignore
(those of the walked folders and of their parents up to the repository root). A file named
explicitly is always checked, like ruff and git do: the user asked for it.

A workspace is not trusted, so its files are read through `read_workspace_file` only: a link
must not turn a source excerpt into a copy of `/proc/self/environ` or a private key, and a
FIFO, a device or a sparse 1 GB file must not hang shardls or exhaust its memory.
"""

from __future__ import annotations

import codecs
import errno
import io
import os
import stat
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from shardls.globs import PatternSet, excluded

SOURCE_SUFFIXES = (".py", ".ipynb")

DEFAULT_SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".ipynb_checkpoints",
        "site-packages",
    }
)
"""Environments, caches and version-control data: never user code to check, often huge."""


MAX_READ_BYTES = 4_000_000
"""The largest file read by default: four bytes per character of the largest file analysed
(`MAX_FILE_CHARS`, `shardls/analysis/workspace.py`); configuration files are far smaller."""

_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)
"""O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer (fstat then refuses
it); O_NOFOLLOW: the resolved path is opened, so a link planted there after resolving fails."""

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class RefusedFile(OSError):
    """shardls does not read this file (a special file, too large, a link out of the workspace);
    the message says why. An OSError, so that every caller treats it as unreadable."""


def read_workspace_file(path: str | Path, roots: Sequence[Path] = (), limit: int = MAX_READ_BYTES) -> bytes:
    """The bytes of a regular file of the workspace, at most `limit` of them.

    A symbolic link (in any component of the path) is followed only when it resolves inside
    one of `roots` (without roots: inside the folder the path names); a link loop, a link to
    nothing, a special file or a file over `limit` raise RefusedFile, other failures OSError.
    """
    absolute = os.path.abspath(path)
    real = _resolve(absolute)
    if real != absolute:
        allowed = [_resolve(str(root)) for root in roots] or [os.path.dirname(absolute)]
        if not any(_within(real, root) for root in allowed):
            raise RefusedFile(
                f"it is a symbolic link to {real}, outside the workspace; shardls reads only the workspace's files"
            )
    descriptor = os.open(real, _OPEN_FLAGS)
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            kind = next((name for test, name in _KINDS if test(status.st_mode)), "not a regular file")
            raise RefusedFile(f"it is {kind}; shardls reads only regular files")
        if status.st_size > limit:
            raise RefusedFile(_too_large(status.st_size, limit))
        with os.fdopen(descriptor, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    finally:
        os.close(descriptor)
    if len(data) > limit:  # it grew while being read (or is a procfs file, whose size says 0)
        raise RefusedFile(_too_large(len(data), limit, at_least=True))
    return data


def decode_source(data: bytes) -> str:
    """Python source as Python reads it: UTF-8, or the encoding of a PEP 263 coding line
    (`# -*- coding: latin-1 -*-`), a UTF-8 byte-order mark dropped. Raises UnicodeDecodeError
    or SyntaxError (an unknown encoding, a BOM that contradicts the coding line)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError:
        data.decode("utf-8")  # no coding line and not UTF-8: the UnicodeDecodeError says where
        raise
    if codecs.lookup(encoding).name == "utf-8" and data.startswith(codecs.BOM_UTF8):
        encoding = "utf-8-sig"
    return data.decode(encoding)


def decode_source_loosely(data: bytes) -> str:
    """`decode_source`, with what does not decode replaced: for a file read for what it defines
    or to show a line of it (an import, a related location), not for the file being checked,
    which gets SH210 instead."""
    try:
        return decode_source(data)
    except (UnicodeDecodeError, SyntaxError):
        return data.decode("utf-8", errors="replace")


def _resolve(path: str) -> str:
    """The path with every link resolved; RefusedFile for a loop or a link to nothing."""
    try:
        return os.path.realpath(path, strict=True)
    except OSError as error:
        if not os.path.lexists(path):
            raise
        what = "a symbolic link loop" if error.errno == errno.ELOOP else "a symbolic link to nothing"
        raise RefusedFile(f"it is {what}; shardls does not follow it") from None


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _too_large(size: int, limit: int, at_least: bool = False) -> str:
    more = "at least " if at_least else ""
    return f"the file has {more}{size:,} bytes; shardls reads files of up to {limit:,}"


def display_path(path: Path) -> str:
    """`pkg/model.py` for a file under the working directory, the absolute path otherwise."""
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(absolute)


def source_lines(text: str) -> tuple[str, ...]:
    """Lines as the analyzer numbers them (`\\r\\n`, `\\r` and `\\n` end a line; nothing else does,
    unlike `str.splitlines`, which also splits at form feeds and Unicode line separators)."""
    return tuple(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def discover(paths: Sequence[Path], exclude: Sequence[PatternSet] = ()) -> list[Path]:
    """The source files under `paths`, each once, sorted; `exclude` applies to walked entries."""
    found: dict[Path, None] = {}
    for path in paths:
        absolute = Path(os.path.abspath(path))
        if absolute.is_dir():
            repository = _repository_root(absolute)
            walk = _Walk(repository or absolute, [*exclude])
            found.update(dict.fromkeys(walk.files(absolute, _parent_ignores(absolute, repository, walk))))
        else:
            found[absolute] = None
    return sorted(found)


@dataclass(frozen=True)
class _Walk:
    root: Path
    """Links in .gitignore files are followed within it (the repository, else the walked folder)."""
    exclude: list[PatternSet]

    def files(self, folder: Path, ignores: list[PatternSet]) -> Iterator[Path]:
        own = self.ignores_of(folder)
        ignores = [*ignores, own] if own else ignores
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError:
            return
        for entry in entries:
            path = folder / entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                # A link to a special file, out of the workspace or in a loop is kept: reading
                # it refuses it, and its SH210 says why it was not checked.
                is_file = not is_dir and (entry.is_symlink() or entry.is_file())
            except OSError:  # deleted meanwhile, or a name the system refuses
                continue
            if is_dir and entry.name in DEFAULT_SKIPPED_DIRS:
                continue
            if any(patterns.match(path, is_dir) for patterns in self.exclude) or excluded(
                ignores, path, is_dir
            ):
                continue
            if is_dir:
                yield from self.files(path, ignores)
            elif is_file and entry.name.endswith(SOURCE_SUFFIXES):
                yield path

    def ignores_of(self, folder: Path) -> PatternSet | None:
        """The folder's .gitignore patterns; None when it has none shardls can read (a missing
        file, a FIFO, a link out of the repository, a file over the size bound)."""
        try:
            data = read_workspace_file(folder / ".gitignore", [self.root])
        except OSError:
            return None
        return PatternSet.parse(folder, data.decode("utf-8", errors="replace").splitlines())


def _repository_root(folder: Path) -> Path | None:
    return next((root for root in (folder, *folder.parents) if (root / ".git").exists()), None)


def _parent_ignores(folder: Path, repository: Path | None, walk: _Walk) -> list[PatternSet]:
    """The .gitignore files above `folder` that apply to it: up to the repository's root, if any."""
    if repository is None:
        return []
    between = [parent for parent in folder.parents if parent == repository or repository in parent.parents]
    return [patterns for parent in reversed(between) if (patterns := walk.ignores_of(parent)) is not None]
