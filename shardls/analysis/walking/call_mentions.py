"""Whether a statement's text may hold a call worth visiting, or a call of one callee: the
cheap test that spares a walk most expressions, kept per statement.

A walk reaches the same statement once per context and per caller search, so the answers are
kept by statement (and callee) for as long as the walker lives."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from shardls.analysis.source import Segment
from shardls.analysis.walking.call_syntax import mentions, node_text
from shardls.analysis.walking.text_tests import TextTest

_WORD = re.compile(r"\w+")
"""A whole word, as `call_syntax.mentions` reads one (no word character on either side)."""


@dataclass
class CallMentions:
    """The answers of `may_call` for one walker, whose `calls` test they use."""

    calls: TextTest
    """Statements that do not match contain no call worth visiting."""
    _answers: dict[tuple[ast.stmt, str | None], bool] = field(default_factory=dict, repr=False)
    """`may_call`'s answers."""
    _words: dict[ast.stmt, frozenset[str] | None] = field(default_factory=dict, repr=False)
    """`_words_of`'s answers (None: asked once, answered by a search of the text)."""

    def may_call(self, stmt: ast.stmt, segment: Segment, callee: str | None) -> bool:
        """Whether the text of a statement (or of a function, from its `def` line) may hold a call
        worth visiting (one of `callee`, when searching its callers). Kept per statement: a walk
        reaches the same statement once per context and caller search, and joining and searching
        its lines each time cost 4% of a profiled check of maxtext."""
        key = (stmt, callee)
        found = self._answers.get(key)
        if found is None:
            words = self._words_of(stmt, segment) if callee is not None else None
            if words is not None and callee is not None and _WORD.fullmatch(callee):
                found = callee in words
            else:
                text = node_text(segment, stmt)
                found = mentions(text, callee) if callee is not None else bool(self.calls.search(text))
            self._answers[key] = found
        return found

    def _words_of(self, stmt: ast.stmt, segment: Segment) -> frozenset[str] | None:
        """The words of a statement's text, once it is asked about a second callee (None the
        first time: one search of the text is cheaper than reading all its words). Whether it
        names a callee as a whole word (`mentions`) is asked for every callee searched, and a
        search of the text per callee cost a test class of thousands of lines 24,000 scans."""
        if stmt not in self._words:
            self._words[stmt] = None
            return None
        words = self._words[stmt]
        if words is None:
            words = self._words[stmt] = frozenset(_WORD.findall(node_text(segment, stmt)))
        return words
