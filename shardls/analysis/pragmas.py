"""Comments that steer the analysis: device count, mesh, suppression; and hints real code already
carries about its device count (`XLA_FLAGS=--xla_force_host_platform_device_count=8`).

Comments are found with Python's tokenizer, one top-level statement at a time, so a `#` inside a
string is never a comment and a pragma may follow other text in a comment
(`x = 1  # note  # shardls: ignore[SH005]`), as ruff reads `# noqa`.

A suppression applies to the lines of its logical line that cannot carry a comment of their own,
as in ruff: the lines of a backslash continuation and of a multi-line string are covered by a
comment on the last of them, the only place Python allows one.
"""

from __future__ import annotations

import functools
import io
import re
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from shardls.analysis.rules import ALL_RULES
from shardls.analysis.source import ParsedSource, Segment
from shardls.analysis.text_cache import TextCache
from shardls.core import Mesh
from shardls.meshtext import parse_mesh_text

_PRAGMA = re.compile(r"#\s*shardls\s*:\s*")
_NOQA = re.compile(r"#\s*noqa", re.IGNORECASE)
_NOQA_CODE = re.compile(r"[A-Z]+[0-9]+")
_XLA_HINT = re.compile(r"xla_force_host_platform_device_count\s*=\s*(\d+)")
_CPU_DEVICES_HINT = re.compile(r"""jax_num_cpu_devices['"]\s*,\s*(\d+)""")
_HINTS = ((_XLA_HINT, "XLA_FLAGS hint"), (_CPU_DEVICES_HINT, "jax_num_cpu_devices hint"))
_OUR_CODE = re.compile(r"SH\d+")
_LIST_ITEM = re.compile(r"[^\s,]+")

SHARDLS = "shardls"
_IGNORE_FILE_ALONE = (
    "`# shardls: ignore-file` must be on a line of its own (as ruff's `# ruff: noqa`); "
    "to silence this line, write `# shardls: ignore`"
)
NOQA = "noqa"
_ANY_NOQA = re.compile(NOQA, re.IGNORECASE)


@dataclass(frozen=True)
class Code:
    """One code of a suppression, with its columns on the comment's line."""

    code: str
    column: int
    end_column: int


@dataclass(frozen=True)
class Suppression:
    """`# shardls: ignore[...]` or `# noqa: ...` on `line`, from `column` (its `#`) to `end_column`."""

    kind: str
    """SHARDLS or NOQA."""
    line: int
    column: int
    end_column: int
    codes: tuple[Code, ...] | None
    """None for a bare `ignore` or `noqa` (every code)."""

    def covers(self, code: str, bare_noqa: bool) -> bool:
        if self.codes is None:
            return self.kind == SHARDLS or bare_noqa
        return any(c.code == code for c in self.codes)


@dataclass(frozen=True)
class Pragmas:
    device_count: tuple[int, int] | None = None
    """(count, 0-based line) from `# shardls: device-count=N`."""
    device_hint: tuple[int, int, str] | None = None
    """(count, line, what) from XLA_FLAGS or jax_num_cpu_devices in the code."""
    mesh: tuple[Mesh, int] | None = None
    ignore_file: bool = False
    suppressions: tuple[Suppression, ...] = ()
    comment_lines: dict[int, int] = field(default_factory=dict)
    """Line -> the line whose comment covers it, for the lines that cannot carry one (only for
    statements that hold a suppression)."""
    errors: tuple[tuple[int, str], ...] = ()
    """(line, why) for each pragma shardls cannot read (SH402)."""
    bare_noqa: bool = False
    """Whether a bare `# noqa` silences shardls too (the `bare-noqa` setting)."""

    def suppression_for(self, line: int, code: str) -> Suppression | None:
        """The suppression that silences `code` on `line`, if any."""
        at = self.comment_lines.get(line, line)
        return next((s for s in self._by_line.get(at, ()) if s.covers(code, self.bare_noqa)), None)

    def on_line(self, line: int) -> list[Suppression]:
        """The suppressions written on `line`."""
        return self._by_line.get(line, [])

    def suppressed(self, line: int, code: str) -> bool:
        return self.suppression_for(line, code) is not None

    @functools.cached_property
    def covered_lines(self) -> dict[int, set[int]]:
        """Comment line -> the other lines its suppressions cover."""
        found: dict[int, set[int]] = {}
        for line, target in self.comment_lines.items():
            found.setdefault(target, set()).add(line)
        return found

    @functools.cached_property
    def _by_line(self) -> dict[int, list[Suppression]]:
        found: dict[int, list[Suppression]] = {}
        for suppression in self.suppressions:
            found.setdefault(suppression.line, []).append(suppression)
        return found


@dataclass(frozen=True)
class Comment:
    line: int
    column: int
    text: str


@dataclass(frozen=True)
class StatementComments:
    """The comments of one top-level statement and where its lines' comments must go."""

    comments: tuple[Comment, ...]
    comment_lines: dict[int, int]


def read_pragmas(source: ParsedSource, bare_noqa: bool = False) -> Pragmas:
    lines = source.lines
    device_count = mesh = None
    ignore_file = False
    suppressions: list[Suppression] = []
    comment_lines: dict[int, int] = {}
    errors: list[tuple[int, str]] = []
    device_hint = _device_hint(source.text)
    # One search of the whole text, not two per segment: most files have no pragma at all.
    commented = SHARDLS in source.text or _ANY_NOQA.search(source.text) is not None
    for segment in source.segments if commented else ():
        if SHARDLS not in segment.text and NOQA not in segment.text.lower():
            continue
        scanned = statement_comments(segment)
        found_here = False
        for comment in scanned.comments:
            for directive, start, end in _directives(comment.text):
                line, column = comment.line, comment.column + start
                if _NOQA.match(directive):
                    noqa = _noqa(directive, line, column)
                    if noqa is not None:
                        suppressions.append(noqa)
                        found_here = True
                    continue
                body = directive[_PRAGMA.match(directive).end() :].strip()  # type: ignore[union-attr]
                if body == "ignore-file" and lines[line][: comment.column].strip():
                    errors.append((line, _IGNORE_FILE_ALONE))
                elif body == "ignore-file":
                    ignore_file = True
                elif body.startswith("ignore"):
                    read = _ignore(body, line, column, comment.column + end)
                    if isinstance(read, str):
                        errors.append((line, read))
                    else:
                        suppressions.append(read)
                        found_here = True
                elif body.startswith("device-count"):
                    value = body.partition("=")[2].strip()
                    if value.isdigit() and int(value) > 0:
                        device_count = (int(value), line)
                    else:
                        errors.append((line, f"device-count needs a positive integer, got {value!r}"))
                elif body.startswith("mesh"):
                    try:
                        mesh = (parse_mesh_text(body[4:].strip(" =")), line)
                    except ValueError as error:
                        errors.append((line, str(error)))
                else:
                    errors.append((line, f"unknown shardls pragma {body!r}"))
        if found_here:
            comment_lines.update(scanned.comment_lines)
    return Pragmas(
        device_count,
        device_hint,
        mesh,
        ignore_file,
        tuple(suppressions),
        comment_lines,
        tuple(errors),
        bare_noqa,
    )


def _device_hint(text: str) -> tuple[int, int, str] | None:
    """The first line that sets the device count for CPU runs (`XLA_FLAGS`' or
    `jax_num_cpu_devices`, the former first on one line): its count, line and kind. Each pattern
    searches the whole text once, skipping matches over several lines."""
    found: list[tuple[int, int, int, str]] = []
    for rank, (pattern, what) in enumerate(_HINTS):
        match = next((m for m in pattern.finditer(text) if "\n" not in m.group(0)), None)
        if match is not None:
            found.append((text.count("\n", 0, match.start()), rank, int(match.group(1)), what))
    if not found:
        return None
    line, _, count, what = min(found)
    return count, line, what


def comment_line(source: ParsedSource, line: int) -> int:
    """The line where a comment about `line` must go: `line` itself, or the last line of the
    backslash continuation or multi-line string it is part of."""
    segment = next((s for s in source.segments if s.first_line <= line < s.first_line + len(s.lines)), None)
    return line if segment is None else statement_comments(segment).comment_lines.get(line, line)


def statement_comments(segment: Segment) -> StatementComments:
    """Tokenize one top-level statement. Where the tokenizer gives up (a statement being typed),
    the rest of its lines are read one by one, and a line where an unclosed string starts ends
    the reading: what follows is inside the string.

    What a text holds is kept by text, in its own line numbers (`_KEPT`): every edit reads the
    comments of every segment that mentions a pragma, and tokenizing a long class that carries
    one took most of an edit of maxtext's `moe.py` (60 ms of its 3,000 lines)."""
    kept = _KEPT.get(segment.text)
    if kept is None:
        kept = _KEPT.put(segment.text, _comments(segment.text, segment.lines))
    first = segment.first_line
    if not first:
        return kept
    return StatementComments(
        tuple(Comment(first + c.line, c.column, c.text) for c in kept.comments),
        {first + line: first + target for line, target in kept.comment_lines.items()},
    )


_KEPT: TextCache[StatementComments] = TextCache(most=20_000, chars=2_000_000)


def _comments(text: str, lines: Sequence[str]) -> StatementComments:
    """`statement_comments` of a statement on the first lines of a file (line 0 its first)."""
    comments: list[Comment] = []
    ends: set[int] = set()
    """Rows where a logical or physical line ends with a token of its own (NEWLINE, NL, COMMENT)."""
    rows_seen = 0
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    try:
        for token in tokens:
            if token.type == tokenize.COMMENT:
                comments.append(Comment(token.start[0] - 1, token.start[1], token.string))
            if token.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT):
                ends.add(token.start[0])
            rows_seen = max(rows_seen, token.end[0])
    except tokenize.TokenError as error:
        message, (row, _) = error.args
        rows_seen = max(rows_seen, len(lines)) if "string" in str(message) else max(rows_seen, row)
    except (SyntaxError, ValueError):  # an IndentationError: read the remaining lines alone
        pass
    for row in range(rows_seen + 1, len(lines) + 1):
        line = row - 1
        ends.add(row)
        written = lines[row - 1]
        comment = _line_comment(written)
        if comment is not None:
            comments.append(Comment(line, comment, written[comment:]))
    comment_lines: dict[int, int] = {}
    target = len(lines) - 1
    for row in range(len(lines), 0, -1):
        if row in ends:
            target = row - 1
        elif row - 1 != target:
            comment_lines[row - 1] = target
    return StatementComments(tuple(comments), comment_lines)


def _line_comment(text: str) -> int | None:
    """The column of the comment on one line read alone, if the tokenizer can tell."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                return token.start[1]
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None
    return None


def _directives(comment: str) -> Iterator[tuple[str, int, int]]:
    """Each `# shardls: ...` and `# noqa...` in a comment, with its columns in the comment; a
    directive ends where the next `#` starts."""
    starts = sorted(
        {m.start() for m in _PRAGMA.finditer(comment)} | {m.start() for m in _NOQA.finditer(comment)}
    )
    for start in starts:
        following = comment.find("#", start + 1)
        text = comment[start : len(comment) if following < 0 else following].rstrip()
        yield text, start, start + len(text)


def _noqa(directive: str, line: int, column: int) -> Suppression | None:
    """ruff's reading of `# noqa`: bare, or `:` and codes separated by commas or spaces;
    anything else is not one. `noqa` is case-insensitive and codes are upper case, as in ruff."""
    head = _NOQA.match(directive)
    assert head is not None
    rest = directive[head.end() :]
    if not rest.lstrip().startswith(":"):
        if rest and not rest[0].isspace():
            return None  # a code glued to the word: ruff refuses it
        return Suppression(NOQA, line, column, column + head.end(), None)
    codes: list[Code] = []
    position = directive.index(":", head.end()) + 1
    while position < len(directive):
        while position < len(directive) and (directive[position].isspace() or directive[position] == ","):
            position += 1
        match = _NOQA_CODE.match(directive, position)
        if match is None:
            break
        codes.append(Code(match.group(), column + match.start(), column + match.end()))
        position = match.end()
    if not codes:
        return None
    return Suppression(NOQA, line, column, codes[-1].end_column, tuple(codes))


def _ignore(body: str, line: int, column: int, end_column: int) -> Suppression | str:
    """`ignore` or `ignore[CODES]`, CODES full rule codes separated by commas or spaces; the
    reason it cannot be read otherwise."""
    rest = body[len("ignore") :].strip()
    if not rest:
        return Suppression(SHARDLS, line, column, end_column, None)
    if not rest.startswith("[") or not rest.endswith("]"):
        return f"cannot read the pragma {body!r}: write `ignore` or `ignore[SH001, SH002]`"
    inside = rest[1:-1]
    items = list(_LIST_ITEM.finditer(inside))
    if not items:
        return f"the pragma {body!r} names no code: write `ignore[SH001]`, or `ignore` for every code"
    problems = [why for item in items if (why := _code_problem(item.group())) is not None]
    if problems:
        return "; ".join(problems)
    bracket = end_column - len(rest) + 1
    codes = tuple(Code(item.group(), bracket + item.start(), bracket + item.end()) for item in items)
    return Suppression(SHARDLS, line, column, end_column, codes)


def _code_problem(code: str) -> str | None:
    """Why an `ignore[...]` item is not a full rule code (an unknown full code is left to the
    unused-suppression check, as ruff does)."""
    if code in ALL_RULES:
        return None
    upper = code.upper()
    if upper in ALL_RULES:
        return f"rule codes are upper case: write {upper}, not {code}"
    matching = sorted(rule for rule in ALL_RULES if rule.startswith(upper))
    if matching:
        shown = ", ".join(matching[:4]) + (", ..." if len(matching) > 4 else "")
        return (
            f"{code} is a prefix, and `ignore[...]` takes full codes ({shown}); "
            "prefixes work in the select and ignore settings"
        )
    if not _OUR_CODE.fullmatch(upper):
        return f"{code!r} is not a rule code such as SH001"
    return None


def ours(code: str) -> bool:
    """Whether a code in a `# noqa` is shardls's (the others belong to other tools)."""
    return _OUR_CODE.fullmatch(code) is not None


def remaining_codes(suppression: Suppression, removed: Sequence[str]) -> list[str]:
    return [c.code for c in suppression.codes or () if c.code not in removed]
