"""`--output-format full` (the default): each diagnostic with its source line, the span
underlined, what to do about it and where related code is, the way ruff shows them.

    model.py:7:62: SH001 dimension 0 of [9, 16] has size 9, which mesh axis 'data' ...
      |
    7 | y = jax.device_put(jnp.zeros((9, 16)), NamedSharding(mesh, P("data", None)))
      |                                                              ^^^^^^ SH001
      |
      = help: make dimension 0 8 or 10, shard it over 'model' instead, or leave it unsharded
      = note: mesh defined here (model.py:5:8)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from shardls.analysis.facts import Diagnostic
from shardls.cli.check_files import FileReport
from shardls.cli.output.common import OutputOptions, position
from shardls.cli.output.style import Style
from shardls.cli.output.text import concise_line, write_text
from shardls.render.hints import diagnostic_hint
from shardls.render.visible import visible

TAB_WIDTH = 4


def render(report: FileReport, diagnostic: Diagnostic, style: Style) -> str:
    lines = [concise_line(report, diagnostic, style)]
    location = report.locate(diagnostic.span)
    span = diagnostic.span
    gutter = " " * len(str(location.line))
    bar = style.gutter(f"{gutter} |")
    if span.line < len(report.lines):
        source = visible(report.lines[span.line])
        end = span.end_column if span.end_line == span.line else len(source)
        start = source[: span.column].expandtabs(TAB_WIDTH)
        width = max(1, len(source[:end].expandtabs(TAB_WIDTH)) - len(start))
        underline = style.severity(f"{'^' * width} {diagnostic.code}", diagnostic.severity)
        lines += [
            bar,
            f"{style.gutter(f'{location.line} |')} {source.expandtabs(TAB_WIDTH)}".rstrip(),
            f"{bar} {' ' * len(start)}{underline}",
            bar,
        ]
    hint = diagnostic_hint(diagnostic.code, diagnostic.data)
    if hint:
        lines.append(f"{style.gutter(f'{gutter} =')} {style.label('help')}: {visible(hint)}")
    for related in diagnostic.related:
        where = visible(position(*report.related_location(related)))
        note = f"{style.emphasis('note')}: {visible(related.message)} ({where})"
        lines.append(f"{style.gutter(f'{gutter} =')} {note}")
    return "\n".join(lines) + "\n\n"


def write(reports: Sequence[FileReport], options: OutputOptions, out: TextIO) -> None:
    write_text(render, reports, options, out)
