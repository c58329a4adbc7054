"""`--output-format concise`: one line per diagnostic."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from shardls.analysis.facts import Diagnostic
from shardls.cli.check_files import FileReport
from shardls.cli.output.common import OutputOptions
from shardls.cli.output.style import Style
from shardls.cli.output.text import concise_line, write_text


def render(report: FileReport, diagnostic: Diagnostic, style: Style) -> str:
    return concise_line(report, diagnostic, style) + "\n"


def write(reports: Sequence[FileReport], options: OutputOptions, out: TextIO) -> None:
    write_text(render, reports, options, out)
