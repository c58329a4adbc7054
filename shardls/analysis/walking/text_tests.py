"""The walker's cheap tests of a segment's or statement's text, written as substring tests
instead of one regular expression of many alternatives.

A pattern such as `Mesh|mesh|PartitionSpec|...` or `\\b(?:zeros|ones|...)\\s*\\(` makes Python's
`re` try every alternative at every position of a text that holds none of them, which is most
texts: those searches took 0.7 s and 0.9 s over the 13,000 top-level statements of maxtext.
`str.__contains__` scans for one substring in C, and a word followed by `(` is found once and
looked up in a set. Each test answers exactly as the expression in its docstring (see
tests/analysis/test_text_tests.py).
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

_P_CALL = re.compile(r"\bPS?\(")
_CALL = re.compile(r"\b(\w++)\s*\(")
"""A word followed by `(`; possessive, as no shorter run of word characters can be followed by `(`."""
_CALLED_RESULT = re.compile(r"\)\s*\(|\bout_sharding\s*=")


class TextTest(Protocol):
    """A test of a text (a compiled regular expression is one): truthy when it may hold what is
    looked for."""

    def search(self, text: str, /) -> object: ...


@dataclass(frozen=True)
class SiteTrigger:
    """Text that may hold a site: any of `words`, or `P(`/`PS(` as a whole word (the regular
    expression `word|word|...|\\bPS?\\(`)."""

    words: tuple[str, ...]

    def search(self, text: str) -> bool:
        if any(word in text for word in self.words):
            return True
        return ("P(" in text or "PS(" in text) and _P_CALL.search(text) is not None


@dataclass(frozen=True)
class NamedCalls:
    """Text that calls one of `names` (as a whole word followed by `(`), calls what a call
    returned, or sets `out_sharding=`: the regular expression
    `\\b(?:name|...)\\s*\\(|\\)\\s*\\(|\\bout_sharding\\s*=`."""

    names: frozenset[str]

    @classmethod
    def of(cls, names: Iterable[str]) -> NamedCalls:
        return cls(frozenset(names))

    def search(self, text: str) -> bool:
        names = self.names
        if any(match.group(1) in names for match in _CALL.finditer(text)):
            return True
        return _CALLED_RESULT.search(text) is not None


def call_matches(test: NamedCalls, text: str) -> Iterator[tuple[int, int]]:
    """The start and end offsets of every match of `test`'s expression in `text` (each call of
    one of its names, of a call's result, each `out_sharding=`), in the order of their starts,
    for testing a text's parts (`walking/call_mentions.py`): `search` on a part finds one exactly
    where one of these lies wholly in the part, when the part is made of whole lines."""
    names = test.names
    calls = (match.span() for match in _CALL.finditer(text) if match.group(1) in names)
    return heapq.merge(calls, (match.span() for match in _CALLED_RESULT.finditer(text)))
