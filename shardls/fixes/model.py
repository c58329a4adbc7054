"""What a quick fix is: edits of a file's text, a title, and whether it is certain.

A fix is **certain** when applying it cannot change what the code means beyond what the
diagnostic asks (`P(None)` to `P()` for a scalar, a keyword Flax renamed, a suppression that
silences nothing). `shardls check --fix` applies only those; a guess (the axis a typo probably
meant, one of several sizes that divide) is offered in the editor and by `--unsafe-fixes`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from shardls.analysis.facts import Span
from shardls.analysis.pragmas import Pragmas, comment_line, read_pragmas
from shardls.analysis.source import ParsedSource, SegmentParser
from shardls.files import source_lines


@dataclass(frozen=True)
class Edit:
    span: Span
    """Lines and columns (Python characters) of the text as the analysis numbers them."""
    text: str


@dataclass(frozen=True)
class Fix:
    title: str
    edits: tuple[Edit, ...]
    preferred: bool = False
    certain: bool = False
    silences: bool = False
    """Adds a suppression comment: never applied by `check --fix`."""


@dataclass(frozen=True)
class FixSource:
    """The text fixes are computed for, with what they need to know about it."""

    text: str

    @functools.cached_property
    def lines(self) -> tuple[str, ...]:
        return source_lines(self.text)

    @functools.cached_property
    def newline(self) -> str:
        """The file's line ending, so that an inserted line matches its neighbours."""
        for ending in ("\r\n", "\n", "\r"):
            if ending in self.text:
                return ending
        return "\n"

    @functools.cached_property
    def parsed(self) -> ParsedSource:
        return SegmentParser(cache_size=64).parse(self.text)

    @functools.cached_property
    def pragmas(self) -> Pragmas:
        return read_pragmas(self.parsed)

    def comment_line(self, line: int) -> int:
        """Where a comment about `line` must go (see `shardls.analysis.pragmas`)."""
        return comment_line(self.parsed, line)

    def text_of(self, span: Span) -> str | None:
        """The text a one-line span covers."""
        if span.line != span.end_line or span.line >= len(self.lines):
            return None
        return self.lines[span.line][span.column : span.end_column]
