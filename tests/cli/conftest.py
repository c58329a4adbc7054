"""Fixtures of the tests of `shardls check`'s persistent cache, which count the files analysed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shardls.analysis.analyzer import Analyzer
from shardls.cli import check_files
from shardls.cli.check_cache import CACHE_DIR_VARIABLE


@pytest.fixture
def cache_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The temporary folder as the working directory, with no cache folder set from outside,
    and every file analysed in this process (so that `analysed` can count them)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(CACHE_DIR_VARIABLE, raising=False)
    monkeypatch.setattr(check_files, "PARALLEL_MIN_FILES", 10**6)


@pytest.fixture
def analysed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The files analysed (by name), in order, since the test began or the list was cleared."""
    seen: list[str] = []
    analyze = Analyzer.analyze

    def counting(self: Analyzer, path: str, text: str, settings: object = None) -> object:
        seen.append(Path(path).name)
        return analyze(self, path, text, settings)  # type: ignore[arg-type]

    monkeypatch.setattr(Analyzer, "analyze", counting)
    yield seen
