"""Whether a statement's text may hold a call worth visiting, or a call of one callee: the
cheap test that spares a walk most expressions, kept per statement.

A walk reaches the same statement once per context and per caller search, so the answers are
kept by statement (and callee) for as long as the walker lives. They are read from the lines of
the statement's segment where the test matches, found once per segment (and callee): the text
of a statement is its whole lines, and a function's statements lie inside its own, so testing
each statement's text scanned a function's body again at every level of nesting (7 % of a
profiled check of maxtext)."""

from __future__ import annotations

import ast
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field

from shardls.analysis.source import Segment
from shardls.analysis.walking.call_syntax import mentions, node_text, word_matches
from shardls.analysis.walking.text_tests import NamedCalls, TextTest, call_matches


@dataclass(frozen=True)
class MatchedLines:
    """Where in a segment's text a pattern matched: each match by the indices of its first and
    last line in `Segment.lines` (a text is made of whole lines joined by newlines)."""

    single: tuple[int, ...]
    """The lines of the matches within one line, ascending."""
    spans: tuple[tuple[int, int], ...]
    """The matches over several lines (`f\\n(`), by first and last line."""

    @classmethod
    def of(cls, text: str, matches: Iterable[tuple[int, int]]) -> MatchedLines:
        """Of the matches of `text` given by their start and end offsets (end exclusive), in the
        order of their starts. Lines are counted from one match to the next, in C."""
        single: set[int] = set()
        spans: list[tuple[int, int]] = []
        offset = line = 0
        for start, end in matches:
            line += text.count("\n", offset, start)
            offset = start
            last = line + text.count("\n", start, end)
            if last == line:
                single.add(line)
            else:
                spans.append((line, last))
        return cls(tuple(sorted(single)), tuple(spans))

    def within(self, first: int, last: int) -> bool:
        """Whether a match lies wholly in lines `first` to `last` (exclusive): the search of those
        lines' text alone finds it. A pattern searched in a whole text matches in a run of its
        lines exactly where a match of the whole lies in the run: the run starts and ends at a
        newline, which no word or `(` is, so none of these patterns (`text_tests`' and a word's)
        matches differently on either side, and a match of the whole that starts before the run
        ends at the `(` after the whitespace that begins it, where no match in the run begins."""
        index = bisect_left(self.single, first)
        if index < len(self.single) and self.single[index] < last:
            return True
        return any(first <= start and end < last for start, end in self.spans)


@dataclass
class CallMentions:
    """The answers of `may_call` for one walker, whose `calls` test they use."""

    calls: TextTest
    """Statements that do not match contain no call worth visiting."""
    _answers: dict[tuple[ast.stmt, str | None], bool] = field(default_factory=dict, repr=False)
    """`may_call`'s answers."""
    _lines: dict[tuple[int, str | None], tuple[Segment, MatchedLines]] = field(
        default_factory=dict, repr=False
    )
    """Where the `calls` test (None) or a callee's name matches in a segment, by the segment's id
    (kept alive with the answer)."""

    def may_call(self, stmt: ast.stmt, segment: Segment, callee: str | None) -> bool:
        """Whether the text of a statement (or of a function, from its `def` line) may hold a call
        worth visiting (one of `callee`, when searching its callers). Kept per statement: a walk
        reaches the same statement once per context and caller search."""
        key = (stmt, callee)
        found = self._answers.get(key)
        if found is None:
            if callee is None and not isinstance(self.calls, NamedCalls):
                found = bool(self.calls.search(node_text(segment, stmt)))
            elif callee is not None and not callee.isidentifier():
                found = mentions(node_text(segment, stmt), callee)
            else:
                first = getattr(stmt, "lineno", 1) - 1
                last = getattr(stmt, "end_lineno", None) or len(segment.lines)
                found = self._matched(segment, callee).within(first, last)
            self._answers[key] = found
        return found

    def _matched(self, segment: Segment, callee: str | None) -> MatchedLines:
        """The lines of the segment where the `calls` test (a `NamedCalls`, for None) or the
        callee as a whole word matches."""
        key = (id(segment), callee)
        kept = self._lines.get(key)
        if kept is None or kept[0] is not segment:
            text = segment.text  # its lines joined by newlines, as a statement's text is made
            if callee is None:
                assert isinstance(self.calls, NamedCalls)
                matches = call_matches(self.calls, text)
            else:
                matches = word_matches(text, callee)
            kept = self._lines[key] = (segment, MatchedLines.of(text, matches))
        return kept[1]
