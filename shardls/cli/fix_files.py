"""`shardls check --fix` and `--diff`: apply the certain quick fixes to the checked files, as
ruff does.

Each file is fixed in rounds: the certain fixes of its diagnostics that do not overlap are
applied together, the text is analysed again, and again, until nothing is left to fix (at most
`MAX_ROUNDS`). A round that would turn a file that parses into one that does not is dropped (a
bug in a fix must never cost the user their code). Files are written atomically (a temporary
file in the same folder, then a rename), never through a symbolic link, never outside the paths
given on the command line, and not when the file changed since it was read. Notebooks are
checked but not fixed.
"""

from __future__ import annotations

import ast
import codecs
import contextlib
import difflib
import os
import re
import stat
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from shardls.cli.check_files import CheckJob, FileReport, check_file
from shardls.fixes import Conflict, FixSource, apply_edits, certain_fixes

MAX_ROUNDS = 10
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


@dataclass(frozen=True)
class FixedFile:
    job: CheckJob
    original: str
    text: str
    fixes: int
    bom: bool
    raw: bytes
    """The file's bytes when it was read, to refuse writing over a change made meanwhile."""

    def encoded(self) -> bytes:
        return (codecs.BOM_UTF8 if self.bom else b"") + self.text.encode("utf-8")


@dataclass(frozen=True)
class FixRun:
    reports: list[FileReport]
    """The reports after the fixes (of the fixed text)."""
    fixed: list[FixedFile]
    problems: list[str]
    """Files that could not be fixed or written, and why."""

    @property
    def count(self) -> int:
        return sum(file.fixes for file in self.fixed)


def fix_files(
    jobs: Sequence[CheckJob], reports: Sequence[FileReport], allowed: Sequence[Path], unsafe: bool
) -> FixRun:
    """Compute the fixes of every file (nothing is written); `allowed` are the checked paths."""
    roots = checked_folders(allowed)
    after: list[FileReport] = []
    fixed: list[FixedFile] = []
    problems: list[str] = []
    for job, report in zip(jobs, reports):
        result, why = _fix_one(job, report, roots, unsafe)
        if why:
            problems.append(f"{job.display}: {why}")
        if result is None:
            after.append(report)
            continue
        fixed.append(result[0])
        after.append(result[1])
    return FixRun(after, fixed, problems)


def _fix_one(
    job: CheckJob, report: FileReport, roots: Sequence[str], unsafe: bool
) -> tuple[tuple[FixedFile, FileReport] | None, str | None]:
    if report.notebook is not None or report.internal_error or not report.diagnostics:
        return None, None
    if not any(certain_fixes(report.diagnostics, FixSource("\n".join(report.lines)), _no_site, unsafe)):
        return None, None
    refused = None if job.data is not None else not_writable(job.path, roots)
    if refused:
        return None, refused
    raw = job.data if job.data is not None else _read(job.path)
    if raw is None:
        return None, "cannot read the file again"
    bom = raw.startswith(codecs.BOM_UTF8)
    try:
        original = raw[len(codecs.BOM_UTF8) if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError:
        return None, None
    text, count, current = original, 0, report
    why: str | None = None
    parses = _parses(original)
    for _ in range(MAX_ROUNDS):
        chosen = certain_fixes(current.diagnostics, FixSource(text), _no_site, unsafe)
        if not chosen:
            break
        try:
            fixed = apply_edits(text, [edit for fix in chosen for edit in fix.edits])
        except Conflict as error:
            why = f"a fix could not be applied ({error}; please report it)"
            break
        if fixed == text:
            break
        if parses and not _parses(fixed):
            why = "a fix would have made the file fail to parse, so it was not applied (please report it)"
            break
        data = (codecs.BOM_UTF8 if bom else b"") + fixed.encode("utf-8")
        text, count = fixed, count + len(chosen)
        current = check_file(replace(job, data=data))
    if count == 0:
        return None, why
    return (FixedFile(job, original, text, count, bom, raw), current), why


def _no_site(_: object) -> None:
    return None


def _parses(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def not_writable(path: Path, roots: Sequence[str]) -> str | None:
    """Why `path` must not be written: a link, not a regular file, or outside the checked paths."""
    try:
        status = os.lstat(path)
    except OSError as error:
        return f"cannot read the file: {error.strerror or error}"
    if stat.S_ISLNK(status.st_mode):
        return "not fixed: it is a symbolic link"
    if not stat.S_ISREG(status.st_mode):
        return "not fixed: not a regular file"
    if not any(_below(path, root) for root in roots):
        return "not fixed: it lies outside the paths given to check"
    return None


def _below(path: Path, root: str) -> bool:
    """Whether `path` is under the folder `root` with no link on the way down (a link to a
    folder elsewhere, planted in the checked tree, must not be written through)."""
    folder = os.path.dirname(os.path.abspath(path))
    if folder != root and not folder.startswith(root.rstrip(os.sep) + os.sep):
        return False
    expected = os.path.normpath(os.path.join(os.path.realpath(root), os.path.relpath(folder, root)))
    return os.path.realpath(folder) == expected


def checked_folders(paths: Sequence[Path]) -> list[str]:
    """The folders `--fix` may write in: each checked folder, and the folder of each checked file."""
    return [os.path.abspath(path if path.is_dir() else path.parent) for path in paths]


def _read(path: Path) -> bytes | None:
    """The file's bytes, opened without following a link, only if it is a regular file."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read()


def write_fixed(file: FixedFile, roots: Sequence[Path]) -> str | None:
    """Write one fixed file atomically; why not, if it was not written."""
    path = file.job.path
    why = not_writable(path, checked_folders(roots))
    if why:
        return why
    if _read(path) != file.raw:
        return "not fixed: the file changed while it was checked"
    mode = stat.S_IMODE(os.lstat(path).st_mode)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(file.encoded())
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return f"cannot write the file: {error.strerror or error}"
    return None


def write_diff(files: Sequence[FixedFile], out: TextIO) -> None:
    """A unified diff per file, as `ruff check --diff` prints it."""
    for file in files:
        for line in difflib.unified_diff(
            _LINES.findall(file.original),
            _LINES.findall(file.text),
            fromfile=file.job.display,
            tofile=file.job.display,
        ):
            ended = line.endswith(("\n", "\r"))
            out.write(line if ended else f"{line}\n\\ No newline at end of file\n")


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"
