"""Parsing that survives editing: a module is split into top-level segments parsed on their own.

Why segments: a half-typed line must only cost the statement it is in, and a one-line edit must
only re-parse the segment it touches (segments are cached by their text, so inserting lines above
a segment does not invalidate it: its tree keeps relative line numbers and an offset).
Measurements behind this choice are in docs/architecture.md.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
import warnings
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from shardls.analysis.source_scan import Scan, scan, segment_starts
from shardls.analysis.text_cache import TextCache
from shardls.analysis.text_diff import LineEdit

_MAX_MERGES = 12
_MAX_REPAIRS = 6
_MERGE_BUDGET = 4
"""Re-joining segments parses at most this many times the file's characters (plus a minimum),
so a file full of unclosed brackets costs a few parses of itself, not 12 per line."""
_CACHE_SIZE = 20_000
_CACHE_CHARS = 1_000_000
"""The parse cache holds trees for at most this many characters of segment text in all (a
tree takes about 60 bytes per character): each edit of a long class adds a tree of the whole
class, and by count alone a session kept hundreds of them."""


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

    def moved(self, lines: int) -> Segment:
        """The same segment (the same tree) `lines` further down the file."""
        repaired = tuple(line + lines for line in self.repaired_lines)
        return Segment(self.first_line + lines, self.text, self.lines, self.body, repaired, self.error)


@dataclass(frozen=True)
class Layout:
    """What parsing found besides the segments, kept so that an edit re-parses only the segments
    around it (`source_edit`) and gets what parsing the whole text would."""

    scan: Scan
    starts: tuple[int, ...]
    """Every line that may begin a statement (`segment_starts`)."""
    costs: tuple[int, ...]
    """The merge budget each segment used, in order."""
    budget_left: int
    """What was left of the merge budget at the end: when it ran out, a merge may have been
    refused, and an edit parses the whole text again."""
    firsts: frozenset[int]
    """The ids of the segments' first statements (no two segments share nodes)."""


@dataclass(frozen=True)
class Edit:
    """Where a parse made from an earlier one (`source_edit.reparse`) differs from it: its
    segments from `first` to `new_end` replaced the earlier's from `first` to `old_end`; those
    before are the very same objects, and those after are too when `delta` is 0, otherwise the
    earlier's moved `delta` lines down (`Segment.moved`: the same text and tree)."""

    previous: weakref.ref[ParsedSource]
    first: int
    old_end: int
    new_end: int
    delta: int = 0
    lines: tuple[int, int] = (0, 0)
    """The earlier text's lines from the first to the last one the edit replaced (0-based, the
    last excluded): those above are the same lines, those below the same lines `delta` down."""


@dataclass(frozen=True)
class ParsedSource:
    lines: tuple[str, ...]
    segments: tuple[Segment, ...]
    text: str = ""
    """The text parsed, with its line ends made `\\n`."""
    layout: Layout | None = field(default=None, compare=False, repr=False)
    edit: Edit | None = field(default=None, compare=False, repr=False)

    @functools.cached_property
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
        self._cache: TextCache[_ParsedText] = TextCache(most=cache_size, chars=_CACHE_CHARS)

    def parse(
        self, text: str, previous: ParsedSource | None = None, edit: LineEdit | None = None
    ) -> ParsedSource:
        """The segments of `text`. Given the parse of an earlier text of the same file, only the
        segments around what changed are parsed again (`source_edit.reparse`); the result is
        what parsing the whole text gives. `edit`: the lines `text` changed of `previous`'s, when
        the caller has compared the two already (`text_diff.line_edit`)."""
        text = text.removeprefix("\ufeff")
        budget = merge_budget(text)
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        if previous is not None and previous.layout is not None:
            from shardls.analysis.source_edit import reparse

            edited = reparse(self, previous, text, budget, edit)
            if edited is not None:
                return edited
        lines = tuple(text.split("\n"))
        found, _ = scan(text)
        starts = segment_starts(lines, found.inside(0, len(lines)))
        if not starts or starts[0] != 0:
            starts.insert(0, 0)
        run = self.segments(lines, starts, 0, budget, set())
        layout = Layout(found, tuple(starts), tuple(run.costs), budget - sum(run.costs), frozenset(run.used))
        return ParsedSource(lines, tuple(run.segments), text, layout)

    def segments(
        self,
        lines: tuple[str, ...],
        starts: Sequence[int],
        index: int,
        budget: int,
        used: set[int],
        until: Callable[[int], bool] | None = None,
    ) -> Segments:
        """The segments from the start `starts[index]` to the end, or to the first segment that
        begins at a start `until` accepts; `used` holds the ids of the first statements of the
        other segments of the file, and gets theirs."""
        run = Segments([], [], index, used)
        while index < len(starts) and not (until is not None and until(index)):
            begin = starts[index]
            end = starts[index + 1] if index + 1 < len(starts) else len(lines)
            chunk = "\n".join(lines[begin:end])
            parsed = self._parse_text(chunk)
            merges = cost = 0
            # A column-0 line inside a multi-line string or bracket splits a statement in two:
            # re-join with the following segments until it parses.
            while (
                parsed.error is not None
                and merges < _MAX_MERGES
                and index + 1 + merges < len(starts)
                and budget - cost > 0
            ):
                merges += 1
                end = starts[index + 1 + merges] if index + 1 + merges < len(starts) else len(lines)
                joined_text = "\n".join(lines[begin:end])
                cost += len(joined_text)  # charged on cache hits too: the result is the same
                joined = self._parse_text(joined_text, repair=False)
                if joined.error is None:
                    chunk, parsed = joined_text, joined
                    break
            else:
                merges = 0
                end = starts[index + 1] if index + 1 < len(starts) else len(lines)
            if parsed.body and id(parsed.body[0]) in used:
                # The same text twice in a file (`jax.set_mesh(mesh)` in two places): the cache
                # would hand both the same nodes, and facts kept by node would merge the two.
                parsed = _parse_with_repair(chunk, repair=merges == 0)
            used.update(id(statement) for statement in parsed.body[:1])
            run.segments.append(
                Segment(
                    begin,
                    chunk,
                    lines[begin:end],
                    parsed.body,
                    tuple(begin + r for r in parsed.repaired),
                    parsed.error,
                )
            )
            run.costs.append(cost)
            budget -= cost
            index += 1 + merges
        run.end = index
        return run

    def forget(self, source: ParsedSource) -> None:
        """Drop the kept trees of a parse's segments (its file is no longer wanted)."""
        for segment in source.segments:
            self._cache.discard(segment.text)
            self._cache.discard("\0" + segment.text)

    def _parse_text(self, chunk: str, repair: bool = True) -> _ParsedText:
        key = chunk if repair else "\0" + chunk
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        return self._cache.put(key, _parse_with_repair(chunk, repair))


@dataclass
class Segments:
    """What `SegmentParser.segments` parsed: the segments, the merge budget each used, the index
    of the start after the last, and the ids of the first statements of the file's segments."""

    segments: list[Segment]
    costs: list[int]
    end: int
    used: set[int]


def merge_budget(text: str) -> int:
    """How many characters merges may parse in all (see `_MERGE_BUDGET`)."""
    return _MERGE_BUDGET * len(text) + 100_000


def _parse_with_repair(chunk: str, repair: bool) -> _ParsedText:
    """Parse; on a syntax error blank the offending line (keeping indentation) and retry a few times.

    Type parameters and aliases (PEP 695: `def f[T](...)`, `class C[T]:`, `type X = ...`), valid
    code that an older Python cannot parse, are erased instead (`[T]` blanked, the alias made an
    assignment), which changes nothing shardls reads of the statement: it is analysed, with no
    error (jax itself now writes them)."""
    lines: list[str] = []
    repaired: list[int] = []
    first_error: str | None = None
    attempts = _MAX_REPAIRS if repair else 1
    while True:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = ast.parse("\n".join(lines) if lines else chunk)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
            line = getattr(error, "lineno", None)
            lines = lines or chunk.split("\n")
            if not isinstance(line, int) or not 1 <= line <= len(lines):
                first_error = first_error or _describe(error)
                break
            if sys.version_info < (3, 12) and _erase_type_syntax(lines, line - 1):
                continue
            first_error = first_error or _describe(error)
            attempts -= 1
            if attempts == 0 or (line - 1) in repaired:
                break
            indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
            lines[line - 1] = lines[line - 1][:indent] + "pass"
            repaired.append(line - 1)
            continue
        return _ParsedText(tuple(module.body), tuple(repaired), first_error)
    return _ParsedText((), tuple(repaired), first_error or "could not parse")


_TYPE_PARAMETERS = re.compile(r"\s*(?:async\s+)?(?:def|class)\s+\w+\s*(?=\[)")
_TYPE_ALIAS = re.compile(r"(?P<indent>\s*)type\s+(?P<name>\w+)\s*")


def _erase_type_syntax(lines: list[str], index: int) -> bool:
    """Erase the PEP 695 syntax that starts on line `index` in place, lines and columns kept:
    type parameters blanked (`def f[T](...)`; over several lines, as tokamax's `def cast_qkv[` with
    one parameter a line, each blanked line ends in a `\\` that joins it to the next, since no
    bracket is open there any more), `type X[T] = v` made `X        = v`. False when there is
    none, or it does not close where counting is safe."""
    line = lines[index]
    header = _TYPE_PARAMETERS.match(line)
    if header is None:
        alias = _without_type_alias(line)
        if alias is not None:
            lines[index] = alias
        return alias is not None
    end = _closing_bracket(lines, index, header.end())
    if end is None:
        return False
    last, column = end
    for number in range(index, last + 1):
        text = lines[number]
        start = header.end() if number == index else 0
        if number == last:
            lines[number] = text[:start] + " " * (column + 1 - start) + text[column + 1 :]
        else:
            lines[number] = text[:start] + " " * max(len(text) - start - 1, 0) + "\\"
    return True


def _without_type_alias(line: str) -> str | None:
    """`type X[T] = v` as the assignment `X        = v` (None: the line holds no alias)."""
    alias = _TYPE_ALIAS.match(line)
    if alias is None:
        return None
    equals = alias.end()
    if line.startswith("[", equals):
        end = _closing_bracket([line], 0, equals)
        if end is None:
            return None
        equals = end[1] + 1 + len(line[end[1] + 1 :]) - len(line[end[1] + 1 :].lstrip())
    if not line.startswith("=", equals) or line.startswith("==", equals):
        return None
    indent, name = alias["indent"], alias["name"]
    return indent + name + " " * (equals - len(indent) - len(name)) + line[equals:]


_MOST_TYPE_PARAMETER_LINES = 20
"""How far down type parameters are followed for their closing bracket."""


def _closing_bracket(lines: list[str], index: int, start: int) -> tuple[int, int] | None:
    """The line and column where the bracket opened at `start` of line `index` closes (None: not
    within a few lines, or a string or comment inside makes counting unsafe)."""
    depth = 0
    for number in range(index, min(index + _MOST_TYPE_PARAMETER_LINES, len(lines))):
        line = lines[number]
        for column in range(start if number == index else 0, len(line)):
            char = line[column]
            if char in "\"'#\\":
                return None
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
                if depth == 0:
                    return number, column
    return None


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
