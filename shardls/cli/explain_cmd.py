"""`shardls explain FILE:LINE[:COL]`: what the editor's hover would say there, as plain text.

shardls explain model.py:12:5
shardls explain explore.ipynb:cell 3:2      (positions as `check` prints them)

With a column, the innermost site whose span or spec contains it is explained (a mesh
definition when no site is there); with a line only, the outermost site starting on that line.
Exit status: 0, or 1 when there is an error-level problem there or nothing to explain.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import Diagnostic, FileAnalysis, MeshFact, Site, Span
from shardls.analysis.workspace import Workspace
from shardls.cli.check_files import UnreadableSource, read_source
from shardls.cli.command import EXIT_OK, EXIT_PROBLEMS, Subparsers, UsageError, option_type
from shardls.cli.settings_args import add_settings_arguments, config_and_layer
from shardls.config import merge_settings
from shardls.core import Severity
from shardls.files import source_lines
from shardls.memory.diagnostics import memory_diagnostics
from shardls.render.site_text import describe_mesh, describe_site
from shardls.render.visible import visible

NAME = "explain"

_TARGET = re.compile(r"(?P<file>.+?)(?::cell\s*(?P<cell>\d+))?:(?P<line>\d+)(?::(?P<column>\d+))?")


@dataclass(frozen=True)
class Target:
    """A place as the user typed it: 1-based line and column; `cell` for notebooks."""

    path: Path
    line: int
    column: int | None
    cell: int | None


def parse_target(text: str) -> Target:
    match = _TARGET.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"expected FILE:LINE or FILE:LINE:COL, such as model.py:12:5, got {text!r}")
    line, column, cell = match.group("line", "column", "cell")
    if int(line) < 1 or (column is not None and int(column) < 1):
        raise ValueError(f"lines and columns count from 1, got {text!r}")
    return Target(
        Path(match.group("file")),
        int(line),
        None if column is None else int(column),
        None if cell is None else int(cell),
    )


def add_parser(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        NAME,
        help="explain the layout at one place of a file, as the editor's hover would",
        description="Print the layout, mesh, spec, assumptions and problems at FILE:LINE[:COL].",
    )
    parser.add_argument(
        "target", type=option_type(parse_target), metavar="FILE:LINE[:COL]", help="e.g. model.py:12:5"
    )
    add_settings_arguments(parser)


def run(args: argparse.Namespace) -> int:
    target: Target = args.target
    analysis, lines, line = _analyse(args, target)
    column = None if target.column is None else target.column - 1
    if column is not None and column > len(lines[line]):
        raise UsageError(f"line {target.line} has only {len(lines[line])} characters")
    site = _site_at(analysis.sites, line, column)
    mesh = None if site is not None else _mesh_at(analysis.meshes, line, column)
    if site is not None:
        problems = _problems_in(analysis.diagnostics, site.span)
        print(visible("\n".join(describe_site(site, problems))))
    elif mesh is not None and mesh.span is not None:
        problems = _problems_in(analysis.diagnostics, mesh.span)
        print(visible("\n".join(describe_mesh(mesh, problems))))
    else:
        print(f"nothing to explain there: no sharding site or mesh{_elsewhere(analysis, target)}")
        return EXIT_PROBLEMS
    return EXIT_PROBLEMS if any(p.severity is Severity.ERROR for p in problems) else EXIT_OK


def _analyse(args: argparse.Namespace, target: Target) -> tuple[FileAnalysis, tuple[str, ...], int]:
    """The file's analysis, its lines, and the target's 0-based line in the analysed text."""
    try:
        text, notebook = read_source(target.path)
    except UnreadableSource as error:
        raise UsageError(f"{target.path}: {error}") from None
    if (notebook is None) != (target.cell is None):
        raise UsageError("a notebook position names its cell (FILE:cell N:LINE); a Python file's does not")
    line: int | None = target.line - 1
    if notebook is not None and target.cell is not None:
        line = notebook.line_of(target.cell, target.line - 1)
    lines = source_lines(text)
    if line is None or line >= len(lines):
        raise UsageError(
            f"{target.path} has no line {target.line}" + (f" in cell {target.cell}" if target.cell else "")
        )
    config, layer = config_and_layer(args, target.path)
    root = (config.root or target.path.parent).resolve()
    analysis = Analyzer(Workspace([root]), producers=(memory_diagnostics,)).analyze(
        str(target.path.resolve()), text, merge_settings(config.layer, layer, file=target.path)
    )
    return analysis, lines, line


def _site_at(sites: Sequence[Site], line: int, column: int | None) -> Site | None:
    """The innermost site at (line, column), a site with a layout winning a tie; with no column,
    the outermost site starting on the line."""
    if column is None:
        starting = [site for site in sites if site.span.line == line]
        return max(starting, key=lambda site: _extent(site.span), default=None)
    matches = [
        (_extent(span), site.layout is None, index, site)
        for index, site in enumerate(sites)
        for span in (site.span, site.spec_span)
        if span is not None and span.contains(line, column)
    ]
    return min(matches)[3] if matches else None


def _mesh_at(meshes: Sequence[MeshFact], line: int, column: int | None) -> MeshFact | None:
    found = [
        mesh
        for mesh in meshes
        if mesh.span is not None
        and (
            mesh.span.line <= line <= mesh.span.end_line
            if column is None
            else mesh.span.contains(line, column)
        )
    ]
    return min(found, key=lambda mesh: _extent(mesh.span) if mesh.span else (0, 0), default=None)


def _extent(span: Span) -> tuple[int, int]:
    return span.end_line - span.line, span.end_column - span.column


def _problems_in(diagnostics: Sequence[Diagnostic], span: Span) -> list[Diagnostic]:
    """Diagnostics whose span overlaps `span`."""
    start, end = (span.line, span.column), (span.end_line, span.end_column)
    return [
        d
        for d in diagnostics
        if (d.span.line, d.span.column) <= end and (d.span.end_line, d.span.end_column) >= start
    ]


def _elsewhere(analysis: FileAnalysis, target: Target) -> str:
    """Where there is something to explain, so the next try can hit it."""
    lines = sorted({site.span.line + 1 for site in analysis.sites})
    if not lines or target.cell is not None:
        return ""
    shown = ", ".join(map(str, lines[:10])) + (", ..." if len(lines) > 10 else "")
    return f" (sites start on line{'s' if len(lines) > 1 else ''} {shown})"
