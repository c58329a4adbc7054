"""Where top-level statements may start: the scan of a text's strings and comments, and the lines
that begin in column 0 outside them.

The scan is kept (`Scan`) so that an edit can scan again only the lines around it
(`source_edit`): each token's extent depends on the text up to its end, except a triple quote
that is never closed, whose failed match reads the whole rest of the text (`unclosed`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Container, Sequence
from dataclasses import dataclass

CONTINUATION_STARTS = ("else", "elif", "except", "finally")

TOKENS = re.compile(
    "|".join(
        (
            r'"""(?:\\.|[^\\])*?"""',  # triple-quoted strings, across lines
            r"'''(?:\\.|[^\\])*?'''",
            r'"(?:\\.|[^"\\\n])*"?',  # one-line strings, closed or not (a backslash continues one)
            r"'(?:\\.|[^'\\\n])*'?",
            r"#[^\n]*",  # comments
        )
    ),
    re.DOTALL,
)
"""Strings and comments, in the order Python's tokenizer meets them, so that quotes inside
comments and `#` inside strings are read as it reads them."""

Token = tuple[int, int, bool]
"""A token over several lines: its first and last line, and whether it is a triple-quoted string
(whose lines after the first start no statement: a long docstring's column-0 lines)."""


@dataclass(frozen=True)
class Scan:
    """The strings of a text that matter for finding statements, by 0-based line."""

    spanning: tuple[Token, ...]
    """Every token over several lines (triple-quoted strings, and one-line strings continued by
    a backslash), in order: a line start they cover is inside a token, where scanning cannot
    restart. An unclosed triple quote (being typed) is no such token, so that it does not
    swallow the rest of the file."""
    unclosed: tuple[int, ...]
    """Lines where a triple quote is never closed, in order: its match looked at the whole rest
    of the text, so an edit anywhere after it may change what it is."""

    def covering(self, line: int) -> Token | None:
        """The token that covers the start of `line` (it began on an earlier line)."""
        index = bisect.bisect_left(self.spanning, (line,)) - 1
        if index >= 0 and self.spanning[index][1] >= line:
            return self.spanning[index]
        return None

    def __contains__(self, line: object) -> bool:
        """Whether `line` continues a triple-quoted string (one lookup: see `inside` for many)."""
        token = self.covering(line) if isinstance(line, int) else None
        return token is not None and token[2]

    def inside(self, first: int, end: int) -> frozenset[int]:
        """The lines from `first` to `end` that continue a triple-quoted string."""
        found: set[int] = set()
        index = max(0, bisect.bisect_left(self.spanning, (first,)) - 1)
        for start, last, triple in self.spanning[index:]:
            if start >= end:
                break
            if triple:
                found.update(range(max(start + 1, first), min(last + 1, end)))
        return frozenset(found)


def scan(text: str, start: int = 0, first_line: int = 0, stop: int | None = None) -> tuple[Scan, int]:
    """The strings of `text` from offset `start` (the first character of line `first_line`,
    outside any token), up to the first line start at or after offset `stop` that no token
    covers (the whole text when `stop` is None). Returns the scan and that line (the number of
    lines when scanning reached the end)."""
    spanning: list[Token] = []
    unclosed: list[int] = []
    line, position = first_line, start
    for match in TOKENS.finditer(text, start):
        if stop is not None and match.start() >= stop:
            break
        token = match.group()
        line += text.count("\n", position, match.start())
        position = match.start()
        breaks = token.count("\n")
        if breaks:
            spanning.append((line, line + breaks, token[:3] in ('"""', "'''")))
            if stop is not None and match.end() > stop:
                after = text.find("\n", match.end())
                stop = len(text) if after < 0 else after + 1
        elif token in ('""', "''") and text.startswith(token[0], match.end()):
            unclosed.append(line)  # a triple quote that did not match: its first two quotes
    if stop is None or stop >= len(text):
        end = text.count("\n", position) + line + 1
    else:
        end = line + text.count("\n", position, stop)
    return Scan(tuple(spanning), tuple(unclosed)), end


def _considered(line: str, number: int, inside: Container[int]) -> bool:
    """Whether a line can begin a statement or be a decorator (column 0, outside strings, not a
    comment, a closing bracket or a continuation like `else:`)."""
    character = line[:1]
    return not (
        not character
        or character in " \t#)]}\f"
        or line.startswith(CONTINUATION_STARTS)
        and _is_keyword_start(line)
        or number in inside
    )


def segment_starts(
    lines: Sequence[str], inside: Container[int], first: int = 0, end: int | None = None
) -> list[int]:
    """Lines from `first` to `end` that may begin a top-level statement; decorators stay with what
    they decorate. `first` must not follow a decorator."""
    starts: list[int] = []
    previous_decorator = False
    for number in range(first, len(lines) if end is None else end):
        line = lines[number]
        if _considered(line, number, inside):
            if not previous_decorator:
                starts.append(number)
            previous_decorator = line[:1] == "@"
    return starts


def after_decorator(lines: Sequence[str], inside: Container[int], line: int) -> bool:
    """Whether the last line before `line` that `segment_starts` considers is a decorator (then
    `line` goes with what it decorates)."""
    for number in range(line - 1, -1, -1):
        if _considered(lines[number], number, inside):
            return lines[number][:1] == "@"
    return False


def _is_keyword_start(line: str) -> bool:
    for keyword in CONTINUATION_STARTS:
        if line.startswith(keyword):
            rest = line[len(keyword) : len(keyword) + 1]
            return rest in ("", " ", ":", "\t", "(")
    return False
