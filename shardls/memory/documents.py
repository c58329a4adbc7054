"""Where the language server writes a model's memory table for the editor to open.

The folder is private to this process: made by `tempfile.mkdtemp` (a name nobody can predict,
mode 0700, owned by this user), so no other user can have planted a link or a file in it. A
fixed `$TMPDIR/shardls/` would be writable by whoever creates it first, and writing there
follows the links they leave (`Net-memory.md -> ~/.bashrc`). The folder is removed when the
server exits.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

_UNSAFE = re.compile(r"[^\w.-]")
"""Characters a file name does not get (a class name has none, but it comes from the workspace)."""

_folder: Path | None = None


def write_memory_document(model_name: str, markdown: str) -> Path:
    """Write `<Model>-memory.md` into the private folder (replacing an earlier one) and return it."""
    name = _UNSAFE.sub("_", model_name)[:100] or "model"
    document = private_folder() / f"{name}-memory.md"
    descriptor = os.open(
        document,
        os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
        0o600,
    )
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(markdown)
    return document


def private_folder() -> Path:
    """This process's folder for documents, made on first use; made again if it was removed or
    is no longer this user's private folder."""
    global _folder
    if _folder is None or not _is_private(_folder):
        _folder = Path(tempfile.mkdtemp(prefix="shardls-"))
        atexit.register(shutil.rmtree, _folder, ignore_errors=True)
    return _folder


def _is_private(folder: Path) -> bool:
    try:
        status = folder.lstat()
    except OSError:
        return False
    owner_only = stat.S_IMODE(status.st_mode) & 0o077 == 0
    mine = not hasattr(os, "getuid") or status.st_uid == os.getuid()
    return stat.S_ISDIR(status.st_mode) and owner_only and mine
