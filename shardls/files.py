"""Which files a check reads: Python files and notebooks under the given paths.

Folders are walked (symlinked folders are not followed, so a link cannot loop), skipping
DEFAULT_SKIPPED_DIRS, whatever the `exclude` patterns match and what `.gitignore` files ignore
(those of the walked folders and of their parents up to the repository root). A file named
explicitly is always checked, like ruff and git do: the user asked for it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
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
            found.update(dict.fromkeys(_walk(absolute, [*exclude], _parent_ignores(absolute))))
        else:
            found[absolute] = None
    return sorted(found)


def _walk(folder: Path, exclude: list[PatternSet], ignores: list[PatternSet]) -> Iterator[Path]:
    own = PatternSet.read(folder / ".gitignore")
    ignores = [*ignores, own] if own else ignores
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        path = folder / entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and entry.name in DEFAULT_SKIPPED_DIRS:
            continue
        if any(patterns.match(path, is_dir) for patterns in exclude) or excluded(ignores, path, is_dir):
            continue
        if is_dir:
            yield from _walk(path, exclude, ignores)
        elif entry.name.endswith(SOURCE_SUFFIXES) and entry.is_file():
            yield path


def _parent_ignores(folder: Path) -> list[PatternSet]:
    """The .gitignore files above `folder` that apply to it: up to the repository's root, if any."""
    for root in (folder, *folder.parents):
        if (root / ".git").exists():
            between = [parent for parent in folder.parents if parent == root or root in parent.parents]
            return [
                patterns
                for parent in reversed(between)
                if (patterns := PatternSet.read(parent / ".gitignore")) is not None
            ]
    return []
