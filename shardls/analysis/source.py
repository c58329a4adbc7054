"""Parsing that survives editing: a module is split into top-level segments parsed on their own.

Why segments: a half-typed line must only cost the statement it is in, and a one-line edit must
only re-parse the segment it touches (segments are cached by their text, so inserting lines above
a segment does not invalidate it: its tree keeps relative line numbers and an offset).
Measurements behind this choice are in docs/architecture.md.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from collections import OrderedDict
from dataclasses import dataclass

_CONTINUATION_STARTS = ("else", "elif", "except", "finally")
_MAX_MERGES = 12
_MAX_REPAIRS = 6
_MERGE_BUDGET = 4
"""Re-joining segments parses at most this many times the file's characters (plus a minimum),
so a file full of unclosed brackets costs a few parses of itself, not 12 per line."""
_CACHE_SIZE = 20_000


@dataclass(frozen=True)
class Segment:
    """A run of top-level lines parsed together. `first_line` is 0-based in the file."""

    first_line: int
    text: str
    lines: tuple[str, ...]
    body: tuple[ast.stmt, ...]
    """Statements with line numbers relative to the segment (line 1 = `first_line`)."""
    repaired_lines: tuple[int, ...] = ()
    """Absolute 0-based lines blanked out to make the rest parse."""
    error: str | None = None
    """Why (part of) the segment could not be parsed."""

    @property
    def line_count(self) -> int:
        return self.text.count("\n") + 1

    def abs_line(self, relative: int) -> int:
        """0-based file line of an AST line number (1-based, relative to the segment)."""
        return self.first_line + relative - 1


@dataclass(frozen=True)
class ParsedSource:
    lines: tuple[str, ...]
    segments: tuple[Segment, ...]

    @property
    def errors(self) -> list[tuple[int, str]]:
        """(0-based line, message) for every place the parser had to give up on."""
        found = []
        for seg in self.segments:
            if seg.error is not None:
                line = seg.repaired_lines[0] if seg.repaired_lines else seg.first_line
                found.append((line, _in_file_lines(seg.error, seg)))
        return found


_LINE_REFERENCE = re.compile(r"\bline (\d+)\b")


def _in_file_lines(message: str, segment: Segment) -> str:
    """Python's message counts lines from the segment that was parsed (`detected at line 10`,
    `after 'if' statement on line 3`); the user counts them from the top of the file."""
    return _LINE_REFERENCE.sub(lambda m: f"line {segment.abs_line(int(m.group(1))) + 1}", message)


@dataclass(frozen=True)
class _ParsedText:
    body: tuple[ast.stmt, ...]
    repaired: tuple[int, ...]
    error: str | None


class SegmentParser:
    """Parses sources into segments, remembering trees by segment text (an LRU of bounded size)."""

    def __init__(self, cache_size: int = _CACHE_SIZE) -> None:
        self._cache: OrderedDict[str, _ParsedText] = OrderedDict()
        self._cache_size = cache_size

    def parse(self, text: str) -> ParsedSource:
        text = text.removeprefix("\ufeff")
        lines = tuple(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
        segments: list[Segment] = []
        starts = _segment_starts(lines, _inside_strings(text))
        merge_budget = _MERGE_BUDGET * len(text) + 100_000
        used: set[int] = set()
        i = 0
        while i < len(starts):
            begin = starts[i]
            end = starts[i + 1] if i + 1 < len(starts) else len(lines)
            chunk = "\n".join(lines[begin:end])
            parsed = self._parse_text(chunk)
            merges = 0
            # A column-0 line inside a multi-line string or bracket splits a statement in two:
            # re-join with the following segments until it parses.
            while (
                parsed.error is not None
                and merges < _MAX_MERGES
                and i + 1 + merges < len(starts)
                and merge_budget > 0
            ):
                merges += 1
                end = starts[i + 1 + merges] if i + 1 + merges < len(starts) else len(lines)
                joined_text = "\n".join(lines[begin:end])
                merge_budget -= len(joined_text)  # charged on cache hits too: the result is the same
                joined = self._parse_text(joined_text, repair=False)
                if joined.error is None:
                    chunk, parsed = "\n".join(lines[begin:end]), joined
                    break
            else:
                merges = 0
                end = starts[i + 1] if i + 1 < len(starts) else len(lines)
            if parsed.body and id(parsed.body[0]) in used:
                # The same text twice in a file (`jax.set_mesh(mesh)` in two places): the cache
                # would hand both the same nodes, and facts kept by node would merge the two.
                parsed = _parse_with_repair(chunk, repair=merges == 0)
            used.update(id(statement) for statement in parsed.body[:1])
            segments.append(
                Segment(
                    begin,
                    chunk,
                    lines[begin:end],
                    parsed.body,
                    tuple(begin + r for r in parsed.repaired),
                    parsed.error,
                )
            )
            i += 1 + merges
        return ParsedSource(lines, tuple(segments))

    def _parse_text(self, chunk: str, repair: bool = True) -> _ParsedText:
        key = chunk if repair else "\0" + chunk
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        parsed = _parse_with_repair(chunk, repair)
        self._cache[key] = parsed
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return parsed


_TOKENS = re.compile(
    "|".join(
        (
            r'"""(?:\\.|[^\\])*?"""',  # triple-quoted strings, across lines
            r"'''(?:\\.|[^\\])*?'''",
            r'"(?:\\.|[^"\\\n])*"?',  # one-line strings, closed or not
            r"'(?:\\.|[^'\\\n])*'?",
            r"#[^\n]*",  # comments
        )
    ),
    re.DOTALL,
)
"""Strings and comments, in the order Python's tokenizer meets them, so that quotes inside
comments and `#` inside strings are read as it reads them."""


def _inside_strings(text: str) -> frozenset[int]:
    """Lines that continue a closed triple-quoted string (a long module docstring): a column-0
    line there starts no statement. An unclosed one (being typed) is ignored, so that it does
    not swallow the rest of the file."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    inside: set[int] = set()
    line = position = 0
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token[:3] in ('"""', "'''") and len(token) >= 6 and "\n" in token:
            line += text.count("\n", position, match.start())
            position = match.start()
            inside.update(range(line + 1, line + token.count("\n") + 1))
    return frozenset(inside)


def _segment_starts(lines: tuple[str, ...], inside_strings: frozenset[int] = frozenset()) -> list[int]:
    """Lines that may begin a top-level statement; decorators stay with what they decorate."""
    starts: list[int] = []
    previous_decorator = False
    for number, line in enumerate(lines):
        first = line[:1]
        if (
            not first
            or number in inside_strings
            or first in " \t#)]}\f"
            or line.startswith(_CONTINUATION_STARTS)
            and _is_keyword_start(line)
        ):
            continue
        if not previous_decorator:
            starts.append(number)
        previous_decorator = first == "@"
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    return starts


def _is_keyword_start(line: str) -> bool:
    for keyword in _CONTINUATION_STARTS:
        if line.startswith(keyword):
            rest = line[len(keyword) : len(keyword) + 1]
            return rest in ("", " ", ":", "\t", "(")
    return False


def _parse_with_repair(chunk: str, repair: bool) -> _ParsedText:
    """Parse; on a syntax error blank the offending line (keeping indentation) and retry a few times."""
    lines: list[str] = []
    repaired: list[int] = []
    first_error: str | None = None
    for _ in range(_MAX_REPAIRS if repair else 1):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = ast.parse("\n".join(lines) if repaired else chunk)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
            message = _describe(error)
            first_error = first_error or message
            line = getattr(error, "lineno", None)
            lines = lines or chunk.split("\n")
            if not isinstance(line, int) or not 1 <= line <= len(lines) or (line - 1) in repaired:
                break
            indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
            lines[line - 1] = lines[line - 1][:indent] + "pass"
            repaired.append(line - 1)
            continue
        return _ParsedText(tuple(module.body), tuple(repaired), first_error)
    return _ParsedText((), tuple(repaired), first_error or "could not parse")


_PEP_695 = re.compile(r"\s*(type\s+\w+\s*(\[.*\])?\s*=|(async\s+)?def\s+\w+\s*\[|class\s+\w+\s*\[)")
"""Type aliases and type parameters (`type X = ...`, `def f[T](...)`), Python 3.12 syntax."""


def _describe(error: BaseException) -> str:
    if isinstance(error, SyntaxError):
        # PEP 701 f-strings (quotes, backslashes, comments inside) and PEP 695 type parameters
        # parse only from 3.12 on: the code is valid, shardls's Python is older.
        newer = error.msg.startswith("f-string") or bool(_PEP_695.match(error.text or ""))
        if sys.version_info < (3, 12) and newer:
            python = f"{sys.version_info.major}.{sys.version_info.minor}"
            return f"syntax error: {error.msg} (valid from Python 3.12; shardls runs on Python {python})"
        return f"syntax error: {error.msg}"
    if isinstance(error, RecursionError):
        return "expression nested too deeply to parse"
    if isinstance(error, MemoryError):
        return "too large to parse"
    return f"cannot parse: {error}"
