"""What every output format shares: its options, its signature, and how it names a position."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TextIO

from shardls.analysis.facts import Diagnostic
from shardls.cli.check_files import FileReport, Location


@dataclass(frozen=True)
class OutputOptions:
    show_layouts: bool = False
    """Also write every site's layout (the text formats and json)."""
    color: bool = False
    """ANSI colours in the text formats (decided by `shardls.cli.terminal.use_color`)."""
    summary: bool = True
    """The closing `Found 3 problems ...` line of the text formats (off with --quiet)."""


Writer = Callable[[Sequence[FileReport], OutputOptions, TextIO], None]


def position(path: str, location: Location) -> str:
    """`model.py:12:5`, or `explore.ipynb:cell 3:2:5` in a notebook (as ruff prints them)."""
    cell = f"cell {location.cell}:" if location.cell is not None else ""
    return f"{path}:{cell}{location.line}:{location.column}"


def diagnostics(reports: Sequence[FileReport]) -> Iterator[tuple[FileReport, Diagnostic]]:
    for report in reports:
        for diagnostic in report.diagnostics:
            yield report, diagnostic
