"""`--output-format github`: GitHub Actions workflow commands, which annotate the pull request.

    ::error file=model.py,line=7,col=62,endLine=7,endColumn=68,title=SH001::dimension 0 of ...

Values are escaped as the Actions toolkit does. A notebook's positions are within a cell, so
its messages start with the cell.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from shardls.cli.check_files import FileReport
from shardls.cli.output.common import OutputOptions, diagnostics
from shardls.core import Severity

_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def write(reports: Sequence[FileReport], options: OutputOptions, out: TextIO) -> None:
    for report, diagnostic in diagnostics(reports):
        where = report.locate(diagnostic.span)
        properties = {
            "file": report.path,
            "line": where.line,
            "col": where.column,
            "endLine": where.end_line,
            "endColumn": where.end_column,
            "title": diagnostic.code,
        }
        cell = f"cell {where.cell}: " if where.cell is not None else ""
        out.write(
            f"::{_LEVELS[diagnostic.severity]} "
            + ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
            + f"::{_escape_data(cell + diagnostic.message)}\n"
        )


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")
