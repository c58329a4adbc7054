"""`shardls check --watch`: check, then check again whenever what was checked changes.

Polling, not OS notifications: it needs no dependency, works the same on every platform and
file system (network drives, containers, WSL), and a project's few hundred files are stat'ed
in milliseconds. A change is any file added, removed, or with a new size or modification time
among the files a check reads and the configuration files that apply to them; a burst of
saves (an editor writing several files) is checked once, after it has settled.

Like `ruff check --watch`, the screen is cleared before each check when stdout is a terminal,
and the loop ends with Ctrl-C (exit status 130, the shell's for SIGINT).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from shardls.cli.command import UsageError

T = TypeVar("T")

POLL_SECONDS = 0.5
SETTLE_SECONDS = 0.2
"""After a change is seen, wait this long for the rest of a burst of saves."""
EXIT_INTERRUPTED = 130

Snapshot = dict[Path, tuple[int, int] | None]


def snapshot(paths: Iterable[Path]) -> Snapshot:
    """Each path's (mtime in ns, size), or None for one that is gone."""
    found: Snapshot = {}
    for path in paths:
        try:
            status = path.stat()
        except OSError:
            found[path] = None
            continue
        found[path] = (status.st_mtime_ns, status.st_size)
    return found


def watch(
    check: Callable[[], int],
    watched: Callable[[], Iterable[Path]],
    quiet: bool = False,
    poll_seconds: float = POLL_SECONDS,
) -> int:
    """Run `check` now and after every change to `watched()` (asked again after each check, so
    new files are seen) until interrupted."""
    try:
        _banner("Starting shardls in watch mode...", quiet)
        while True:
            before = _guarded(lambda: snapshot(watched()))
            _guarded(check)
            while _guarded(lambda: snapshot(watched())) == before:
                time.sleep(poll_seconds)
            time.sleep(SETTLE_SECONDS)
            _banner("File change detected, checking again...", quiet)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _guarded(step: Callable[[], T]) -> T | None:
    """A usage error while watching (a configuration file saved half-edited) is printed, and
    the watch goes on until the next change fixes it."""
    try:
        return step()
    except UsageError as error:
        print(f"shardls check: error: {error}", file=sys.stderr, flush=True)
        return None


def _banner(text: str, quiet: bool) -> None:
    if sys.stdout.isatty():
        sys.stdout.write("\x1b[2J\x1b[H")  # clear the screen and go home, as ruff does
    if not quiet:
        print(f"[{datetime.now():%H:%M:%S}] {text}", file=sys.stderr, flush=True)
