"""File paths as strings, and files opened for reading: what a config loader names a file by.

Code finds its config files from where it is written (`os.path.join(os.path.dirname(__file__),
"configs", "base.yml")`) or from a literal path, and opens them with `open(path)`. `__file__` is
the analysed file's absolute path (`evaluation/names.py`), and the `os.path` functions here
compute on known strings as Python does; a relative path given to `abspath` depends on the
directory a run starts in, so it stays unknown. `open(path)` for reading is a `FileV`, which
nothing reads here: a loader of the file's format (`library/yaml_files.py`) does.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.registry import calls, methods
from shardls.analysis.values import BoundMethod, Const, FileV, Origin, Unknown, Value, as_str, assumption_of


def _path_result(path: str, *parts: Value) -> Value:
    """A computed path, as assumed as the parts it came from."""
    assumption = assumption_of(*parts)
    origin = Origin(f"path {path}", assumption=assumption)
    return Const(path, origin=origin)


def _strings(call: CallArgs) -> list[str] | None:
    texts = [as_str(arg) for arg in call.args]
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
    """An absolute path normalised. A relative one is resolved against the directory a run
    starts in, which is not known here; links are not resolved (the file is read, later, only
    inside the workspace)."""
    parts = _strings(call)
    if parts is None or len(parts) != 1:
        return None
    if not os.path.isabs(parts[0]):
        return Unknown("a relative path, resolved against the directory a run starts in")
    return _path_result(os.path.normpath(parts[0]), *call.args)


@calls("builtins.open")
def _open(call: CallArgs) -> Value | None:
    """`open(path)` or `open(path, "r")`: a file read as text; any other mode is no config."""
    path = as_str(call.get(0, "file") or Const(None))
    mode = call.get(1, "mode")
    if path is None or (mode is not None and as_str(mode) not in ("r", "rt")):
        return None
    return FileV(path)


@methods(FileV, "read", "__enter__")
def _file_method(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    file = method.base
    assert isinstance(file, FileV)
    if method.name == "read" and not call.args and not file.read:
        return FileV(file.path, read=True)
    return file if method.name == "__enter__" else None
