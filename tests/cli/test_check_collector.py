"""`check` runs the garbage collector once per file: each file's garbage cycles are freed, what
survives is frozen until the next run, and the collector's state is what it was after the run."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from check_helpers import GOOD, check, write

from shardls.cli import check_files
from shardls.cli.collector import collected_by_file, settle


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def _cycle() -> weakref.ref[Node]:
    first, second = Node(), Node()
    first.other, second.other = second, first
    return weakref.ref(first)


@pytest.fixture(autouse=True)
def _unfrozen() -> Iterator[None]:
    """What the tests freeze is not left frozen for the rest of the session."""
    yield
    gc.unfreeze()


def test_a_settled_file_leaves_no_cycle_and_freezes_what_survives() -> None:
    with collected_by_file():
        assert not gc.isenabled()
        dropped = _cycle()
        kept = Node()
        assert any(tracked is kept for tracked in gc.get_objects())
        settle()
        assert dropped() is None
        assert not any(tracked is kept for tracked in gc.get_objects())  # frozen
    assert gc.isenabled()


def test_the_next_run_unfreezes_what_the_previous_one_froze() -> None:
    with collected_by_file():
        pass
    assert gc.get_freeze_count() > 0
    with collected_by_file():
        assert gc.get_freeze_count() == 0


def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    try:
        with collected_by_file():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_serial_check_settles_after_every_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"pyproject.toml": "[tool.shardls]\n", **{f"m{i}.py": GOOD for i in range(3)}})
    settled: list[int] = []
    monkeypatch.setattr(check_files, "settle", lambda: settled.append(gc.get_count()[0]))
    monkeypatch.setattr(check_files, "PARALLEL_MIN_FILES", 10**6)
    check(capsys, "--no-cache", "--output-format", "json")
    assert len(settled) == 3
    assert gc.isenabled()
