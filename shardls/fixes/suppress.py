"""Fixes about suppression comments: silence a diagnostic on its line, and remove what an
unused suppression (SH401) names.

"Ignore SHxxx on this line" writes the comment where shardls and Python both accept it: on the
diagnostic's line, or for a line inside a backslash continuation or a multi-line string, on the
last line of it (see `shardls.analysis.pragmas`). An existing `# shardls: ignore[...]` there
gets the code added; other comments stay as they are, with the pragma after them.
"""

from __future__ import annotations

from shardls.analysis.facts import Diagnostic, Span
from shardls.analysis.pragmas import NOQA, SHARDLS
from shardls.analysis.suppressions import UNUSED
from shardls.fixes.model import Edit, Fix, FixSource

_NOT_SILENCEABLE = frozenset({"SH210"})
"""A file that is not analysed reads no pragma either."""


def ignore_fix(diagnostic: Diagnostic, source: FixSource) -> list[Fix]:
    code = diagnostic.code
    if code in _NOT_SILENCEABLE or diagnostic.span.line >= len(source.lines):
        return []
    line = source.comment_line(diagnostic.span.line)
    title = f"Ignore {code} on this line"
    existing = [s for s in source.pragmas.on_line(line) if s.kind == SHARDLS]
    if any(s.codes is None or any(c.code == code for c in s.codes) for s in existing):
        return []  # already silenced there: the diagnostic comes from elsewhere
    if existing and existing[0].codes:
        at = existing[0].codes[-1].end_column
        return [Fix(title, (Edit(Span(line, at, line, at), f", {code}"),), silences=True)]
    end = len(source.lines[line])
    return [Fix(title, (Edit(Span(line, end, line, end), f"  # shardls: ignore[{code}]"),), silences=True)]


def unused_suppression_fix(diagnostic: Diagnostic, source: FixSource) -> list[Fix]:
    """Drop the codes SH401 names from the comment, or the comment when nothing is left."""
    data = diagnostic.data
    kind, remove, keep = data.get("kind"), data.get("remove"), data.get("keep")
    span = diagnostic.span
    if (
        diagnostic.code != UNUSED
        or kind not in (SHARDLS, NOQA)
        or not isinstance(remove, list)
        or not isinstance(keep, list)
        or span.line >= len(source.lines)
    ):
        return []
    certain = not diagnostic.assumptions
    named = ", ".join(str(code) for code in remove if code != "*")
    if keep:
        codes = ", ".join(str(code) for code in keep)
        written = f"# shardls: ignore[{codes}]" if kind == SHARDLS else f"# noqa: {codes}"
        title = f"Remove {named} from the suppression"
        return [Fix(title, (Edit(span, written),), preferred=True, certain=certain)]
    return [Fix("Remove the unused suppression", (_removal(source, span),), preferred=True, certain=certain)]


def _removal(source: FixSource, span: Span) -> Edit:
    """The edit that removes the directive at `span` and the rest of its comment part (up to the
    next `#`), with the spaces before it when it ends the line; a line left blank goes."""
    text = source.lines[span.line]
    following = text.find("#", span.end_column)
    if following >= 0:
        return Edit(Span(span.line, span.column, span.line, following), "")
    before = text[: span.column]
    if before.strip():
        start = len(before.rstrip())
        return Edit(Span(span.line, start, span.line, len(text)), "")
    if span.line + 1 < len(source.lines):
        return Edit(Span(span.line, 0, span.line + 1, 0), "")
    return Edit(Span(span.line, 0, span.line, len(text)), "")
