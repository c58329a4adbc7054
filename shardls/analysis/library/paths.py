"""File paths, and files opened for reading: what a config loader names a file by.

Code finds its config files from where it is written (`os.path.join(os.path.dirname(__file__),
"configs", "base.yml")`, `Path(__file__).parent / "configs" / "base.yml"`) or from a literal
path, and opens them with `open(path)`, `path.open()` or `path.read_text()`. `__file__` is the
analysed file's absolute path (`evaluation/names.py`), and the `os.path` and `pathlib` operations
here compute on known paths as Python does (a `Path` is a `PathV`, its `/` is in
`evaluation/operators.py`); a relative path made absolute depends on the directory a run starts
in, so it stays unknown, and links are not resolved (the file is read, later, only inside the
workspace). A file opened for reading is a `FileV`, which nothing reads here: a loader of the
file's format (`library/yaml_files.py`) does.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import PurePath

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.registry import attributes, calls, methods
from shardls.analysis.values import (
    BoundMethod,
    Const,
    FileV,
    Origin,
    PathV,
    Unknown,
    Value,
    as_str,
    assumption_of,
)


def _path_result(path: str, *parts: Value) -> Value:
    """A computed path, as assumed as the parts it came from."""
    assumption = assumption_of(*parts)
    origin = Origin(f"path {path}", assumption=assumption)
    return Const(path, origin=origin)


def path_text(value: Value) -> str | None:
    """The text of a path given as a string or a `Path`."""
    return value.path if isinstance(value, PathV) else as_str(value)


def _strings(call: CallArgs) -> list[str] | None:
    texts = [path_text(arg) for arg in call.args]
    if call.kwargs or any(text is None for text in texts):
        return None
    return [text for text in texts if text is not None]


@calls("os.path.join")
def _join(call: CallArgs) -> Value | None:
    parts = _strings(call)
    if not parts:
        return None
    return _path_result(os.path.join(*parts), *call.args)


@calls("os.path.dirname", "os.path.basename", "os.path.normpath")
def _one_path(call: CallArgs) -> Value | None:
    parts = _strings(call)
    if parts is None or len(parts) != 1:
        return None
    function: dict[str, Callable[[str], str]] = {
        "dirname": os.path.dirname,
        "basename": os.path.basename,
        "normpath": os.path.normpath,
    }
    return _path_result(function[call.qualname.rsplit(".", 1)[-1]](parts[0]), *call.args)


@calls("os.path.abspath", "os.path.realpath")
def _absolute(call: CallArgs) -> Value | None:
    parts = _strings(call)
    if parts is None or len(parts) != 1:
        return None
    absolute = _absolute_text(parts[0])
    return absolute if isinstance(absolute, Unknown) else _path_result(absolute, *call.args)


def _absolute_text(path: str) -> str | Unknown:
    """An absolute path normalised; a relative one is resolved against the directory a run
    starts in, which is not known here."""
    if not os.path.isabs(path):
        return Unknown("a relative path, resolved against the directory a run starts in")
    return os.path.normpath(path)


@calls("os.fspath")
def _fspath(call: CallArgs) -> Value | None:
    path = path_text(call.get(0, "path") or Const(None))
    return None if path is None else Const(path, origin=Origin(f"path {path}"))


@calls("pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath", "pathlib.PurePosixPath")
def _path(call: CallArgs) -> Value | None:
    parts = _strings(call)
    return None if parts is None else PathV(str(PurePath(*parts)))


@attributes(PathV)
def _path_attribute(
    library: Library, evaluator: object, base: Value, attr: str, frame: object
) -> Value | None:
    if not isinstance(base, PathV):
        return None
    pure = PurePath(base.path)
    if attr == "parent":
        return PathV(str(pure.parent))
    if attr in ("name", "stem", "suffix"):
        text: str = getattr(pure, attr)
        return Const(text, origin=Origin(f"{attr} of path {base.path}"))
    return None


@methods(PathV, "resolve", "absolute", "joinpath", "open", "read_text", "__str__", "__fspath__")
def _path_method(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    path = method.base
    assert isinstance(path, PathV)
    if method.name in ("resolve", "absolute"):
        absolute = _absolute_text(path.path)
        return absolute if isinstance(absolute, Unknown) else PathV(absolute)
    if method.name == "joinpath":
        parts = _strings(call)
        return None if parts is None else PathV(str(PurePath(path.path, *parts)))
    if method.name in ("__str__", "__fspath__"):
        return Const(path.path, origin=Origin(f"path {path.path}"))
    if method.name == "open" and _reading(call.get(0, "mode")):
        return FileV(path.path)
    return FileV(path.path, read=True) if method.name == "read_text" else None


def _reading(mode: Value | None) -> bool:
    return mode is None or as_str(mode) in ("r", "rt")


@calls("builtins.open")
def _open(call: CallArgs) -> Value | None:
    """`open(path)` or `open(path, "r")`: a file read as text; any other mode is no config."""
    path = path_text(call.get(0, "file") or Const(None))
    if path is None or not _reading(call.get(1, "mode")):
        return None
    return FileV(path)


@methods(FileV, "read", "__enter__")
def _file_method(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    file = method.base
    assert isinstance(file, FileV)
    if method.name == "read" and not call.args and not file.read:
        return FileV(file.path, read=True)
    return file if method.name == "__enter__" else None
