"""Applying fixes to a text: edits at (line, column) become offsets in the text with its own
line endings, and fixes whose edits would overlap are not applied together."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from shardls.analysis.facts import Diagnostic, Site, Span
from shardls.fixes.catalog import fixes_for
from shardls.fixes.model import Edit, Fix, FixSource

_LINE_END = re.compile(r"\r\n|\r|\n")


class Conflict(ValueError):
    """Edits that overlap or point outside the text."""


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    starts = [0, *(match.end() for match in _LINE_END.finditer(text))]
    placed = sorted(
        (_offset(text, starts, e.span, end=False), _offset(text, starts, e.span, end=True), e.text)
        for e in edits
    )
    result: list[str] = []
    position = 0
    for start, end, replacement in placed:
        if start < position or end < start:
            raise Conflict("overlapping edits")
        result += [text[position:start], replacement]
        position = end
    result.append(text[position:])
    return "".join(result)


def _offset(text: str, starts: Sequence[int], span: Span, end: bool) -> int:
    line, column = (span.end_line, span.end_column) if end else (span.line, span.column)
    if not 0 <= line < len(starts):
        raise Conflict(f"line {line + 1} is outside the text")
    line_end = _LINE_END.search(text, starts[line])
    length = (line_end.start() if line_end else len(text)) - starts[line]
    if not 0 <= column <= length:
        raise Conflict(f"column {column + 1} is outside line {line + 1}")
    return starts[line] + column


def certain_fixes(
    diagnostics: Sequence[Diagnostic],
    source: FixSource,
    site_of: Callable[[Diagnostic], Site | None],
    unsafe: bool = False,
) -> list[Fix]:
    """One fix per diagnostic that has a certain one (with `unsafe`, also the only fix of one
    that has a single uncertain fix), leaving out those that overlap a fix chosen before."""
    chosen: list[Fix] = []
    taken: list[Span] = []
    for diagnostic in diagnostics:
        offered = [fix for fix in fixes_for(diagnostic, source, site_of(diagnostic)) if not fix.silences]
        fix = next((f for f in offered if f.certain), None)
        if fix is None and unsafe and len(offered) == 1:
            fix = offered[0]
        if fix is None or any(_touches(edit.span, span) for edit in fix.edits for span in taken):
            continue
        chosen.append(fix)
        taken.extend(edit.span for edit in fix.edits)
    return chosen


def _touches(a: Span, b: Span) -> bool:
    return (a.line, a.column) <= (b.end_line, b.end_column) and (b.line, b.column) <= (
        a.end_line,
        a.end_column,
    )
