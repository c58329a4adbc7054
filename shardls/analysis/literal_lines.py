"""The "line N" a string literal of a file could put into a text, so that moving the lines the
analysis named in its texts (`line_shift`) never moves one that is a value's.

The analysis writes `line {number}` wherever it names a line; a value it shows in a text (an
axis name, a key, a label) is made of the file's literals and could read the same, and then it
is no line reference and must stay. Which "line N" a literal could make is decided by its
number, for each "line N" a kept result's text names, not for the whole file (a test file full
of `"linear1"` keys moved none before):

- "line" at the end of a literal, or followed by blanks and nothing or a placeholder, could be
  followed by any number (`f"line {n}"`, `"line " + str(n)`, `"line %d" % n`);
- `"line 12 of x"` makes "line 12" only, and `"line 12"`, ending right after its digits, also
  "line 12" followed by more digits joined to it;
- a longer word (`"linear"`, `"lines"`, `"line_count"`) and "line" followed by a word
  (`"line of"`) or by punctuation (`"line:"`) make none as written.

Not followed: a value made by cutting or rewriting a literal (`"linear"[:4]`, `.replace`) or
by joining pieces that spell "line" only together (`"li" + "ne 3"`). The file-wide rule before
this held back every result of a file with any word beginning with "line" in a literal, so it
caught the first kind by accident (never the second); that gap is the price of moving the
results of files such as flax's `transforms_test.py` (1,079 -> 85 ms of server CPU per Enter).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.text_cache import TextCache

_WORD = re.compile(r"\bline(?!\w)", re.IGNORECASE)
_NUMBERED = re.compile(r"\s+(\d+)(\w?)")


@dataclass(frozen=True)
class LiteralLines:
    """The numbers of the "line N" some literal could make: any, or these (`exact`), or these
    followed by any digits (`prefixes`)."""

    any: bool = False
    exact: frozenset[str] = frozenset()
    prefixes: frozenset[str] = frozenset()

    def could_make(self, number: str) -> bool:
        """Whether a literal could have made "line {number}" (`number` as the text writes it)."""
        return self.any or number in self.exact or any(number.startswith(p) for p in self.prefixes)

    def __or__(self, other: LiteralLines) -> LiteralLines:
        if not other.any and not other.exact and not other.prefixes:
            return self
        return LiteralLines(self.any or other.any, self.exact | other.exact, self.prefixes | other.prefixes)


NONE = LiteralLines()
_ANY = LiteralLines(any=True)


def _of_literal(literal: str) -> LiteralLines:
    """What one literal could make, by each word "line" in it (see the module's docstring)."""
    found = NONE
    for word in _WORD.finditer(literal):
        tail = literal[word.end() :]
        rest = tail.lstrip()
        numbered = _NUMBERED.match(tail)
        if numbered is not None:
            digits, joined = numbered.groups()
            if joined:
                continue
            if numbered.end() == len(tail):
                found |= LiteralLines(prefixes=frozenset({digits}))
            else:
                found |= LiteralLines(exact=frozenset({digits}))
        elif not rest or (rest != tail and not (rest[0].isalpha() or rest[0] == "_")):
            return _ANY
    return found


_KEPT: TextCache[LiteralLines] = TextCache(most=20_000, chars=2_000_000)
"""`segment_lines` by segment text (not by tree: keeping trees alive costs memory); a file keeps
most of its segments' strings from one edit to the next."""


def segment_lines(text: str, body: tuple[ast.stmt, ...]) -> LiteralLines:
    """What the string literals of a segment (`text`, parsed as `body`) could make."""
    found = _KEPT.get(text)
    if found is None:
        found = NONE
        if _WORD.search(text) is not None:
            for literal in _literals(body):
                found |= _of_literal(literal)
        _KEPT.put(text, found)
    return found


def file_lines(module: ModuleInfo) -> LiteralLines:
    """What the string literals of the module could make."""
    found = NONE
    for segment in module.source.segments:
        found |= segment_lines(segment.text, segment.body)
    return found


def _literals(body: tuple[ast.stmt, ...]) -> Iterable[str]:
    """The string and bytes literals of a tree but its docstrings (an expression statement's
    value is never read)."""
    for statement in body:
        unread = set()
        for node in ast.walk(statement):
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                unread.add(id(node.value))
            elif isinstance(node, ast.Constant) and id(node) not in unread:
                if isinstance(node.value, str):
                    yield node.value
                elif isinstance(node.value, bytes):
                    yield node.value.decode("latin-1")
