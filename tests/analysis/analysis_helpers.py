"""Small helpers for analysis tests: analyse a text and look things up by line."""

from __future__ import annotations

import textwrap
from pathlib import Path

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis, Site
from shardls.analysis.settings import Settings
from shardls.analysis.workspace import Workspace


def analyze(source: str, settings: Settings | None = None, path: str = "/virtual/model.py") -> FileAnalysis:
    return Analyzer().analyze(path, textwrap.dedent(source), settings)


def line_of(source: str, marker: str) -> int:
    """0-based line of the first line containing `marker` in the dedented source."""
    for number, line in enumerate(textwrap.dedent(source).split("\n")):
        if marker in line:
            return number
    raise AssertionError(f"{marker!r} not in source")


def site_named(analysis: FileAnalysis, name: str) -> Site:
    found = [s for s in analysis.sites if s.name == name]
    assert found, f"no site {name!r} in {[s.name for s in analysis.sites]}"
    return found[0]


def codes(analysis: FileAnalysis) -> list[str]:
    return [d.code for d in analysis.diagnostics]


def workspace(root: Path, files: dict[str, str]) -> Analyzer:
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text))
    return Analyzer(Workspace([root]))
