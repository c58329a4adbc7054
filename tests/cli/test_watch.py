"""`shardls check --watch`, run as a user runs it: start it, change files, read what it prints
again, stop it. Every wait is a hang limit (≥ 120 s), never a timing expectation."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from check_helpers import BAD, GOOD, write

from shardls.cli.watch import snapshot

HANG_LIMIT = 120.0


class Watcher:
    """A `shardls check --watch` process whose stdout and stderr lines are read as they come."""

    def __init__(self, cwd: Path, *argv: str) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("FORCE_COLOR", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "shardls", "check", "--watch", *argv],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[tuple[str, str]] = queue.Queue()
        self.pending: dict[str, list[str]] = {"out": [], "err": []}
        for name, stream in (("out", self.process.stdout), ("err", self.process.stderr)):
            threading.Thread(target=self._pump, args=(name, stream), daemon=True).start()

    def _pump(self, name: str, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            self.lines.put((name, line.rstrip("\n")))

    def wait_for(self, stream: str, text: str) -> list[str]:
        """The lines of `stream` read up to and including the first that contains `text`. Lines
        of the other stream read meanwhile are kept for its next wait: the two pipes are read by
        two threads, so their lines may arrive in either order."""
        seen: list[str] = []
        deadline = time.monotonic() + HANG_LIMIT
        while True:
            pending = self.pending[stream]
            while pending:
                line = pending.pop(0)
                seen.append(line)
                if text in line:
                    return seen
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {text!r} on {stream} within {HANG_LIMIT} s; saw {seen}")
            try:
                name, line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            self.pending[name].append(line)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=HANG_LIMIT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=HANG_LIMIT)


@pytest.fixture
def watcher(tmp_path: Path) -> Iterator[list[Watcher]]:
    started: list[Watcher] = []
    yield started
    for one in started:
        one.stop()


def _touch_later(path: Path, text: str) -> None:
    """Write `text` so that its modification time differs from the last write's, even on file
    systems with coarse timestamps (the size differs too, for those that keep none)."""
    before = path.stat().st_mtime_ns if path.exists() else None
    path.write_text(text, encoding="utf-8")
    if path.stat().st_mtime_ns == before:
        os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


def test_watch_checks_again_after_a_change(tmp_path: Path, watcher: list[Watcher]) -> None:
    write(tmp_path, {"model.py": GOOD})
    one = Watcher(tmp_path, "--output-format", "concise")
    watcher.append(one)
    one.wait_for("err", "Starting shardls in watch mode")
    one.wait_for("out", "All checks passed (1 file).")
    _touch_later(tmp_path / "model.py", BAD)
    one.wait_for("err", "File change detected")
    lines = one.wait_for("out", "Found 1 problem")
    assert any(line.startswith("model.py:6:") and " SH001 " in line for line in lines)
    # a new file in a watched folder is seen too, and a fixed one checks clean again
    _touch_later(tmp_path / "model.py", GOOD)
    write(tmp_path, {"second.py": GOOD})
    one.wait_for("out", "All checks passed (2 files).")
    assert one.process.poll() is None  # still watching


def test_watch_reports_a_broken_configuration_and_goes_on(tmp_path: Path, watcher: list[Watcher]) -> None:
    write(tmp_path, {"model.py": BAD, "shardls.toml": "ignore = ['SH001']\n"})
    one = Watcher(tmp_path, "--output-format", "concise", "--no-cache")
    watcher.append(one)
    one.wait_for("out", "All checks passed")
    _touch_later(tmp_path / "shardls.toml", "ignore = ['SH0O1']\n")
    one.wait_for("err", "'SH0O1' is not a rule code")
    _touch_later(tmp_path / "shardls.toml", "device-count = 8\n")
    one.wait_for("out", "Found 1 problem")
    assert one.process.poll() is None


def test_watch_refuses_standard_input(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "shardls", "check", "--watch", "-"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=HANG_LIMIT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "--watch watches files, so it cannot check standard input" in done.stderr


def test_snapshot_sees_changes_and_removals(tmp_path: Path) -> None:
    path = tmp_path / "a.py"
    path.write_text("x = 1\n")
    first = snapshot([path])
    assert snapshot([path]) == first
    _touch_later(path, "x = 22\n")
    assert snapshot([path]) != first
    path.unlink()
    assert snapshot([path]) == {path: None}
