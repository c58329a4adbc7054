"""String literals in Python source, each with the calls and keywords it is written inside.

Completion, go-to-definition and references work on axis names written as strings (`"model"`)
while the user is typing, when brackets are unbalanced and strings unterminated, so this is a
small scanner rather than `ast` or `tokenize` (which give up on such text). For every literal it
records the callees and keywords around it, innermost first: `P(None, "model")` gives `("P",)`,
`nnx.Param(x, sharding=(None, "model"))` gives `("sharding", "Param")`, and its position among
the items of the innermost bracket, which is how rule tables pair a logical name with its axes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from shardls.analysis.facts import Span

SPEC_HEADS = frozenset(
    {
        "P",
        "PS",
        "PartitionSpec",
        "with_partitioning",
        "sharding",
        "out_sharding",
        "sharding_names",
        "in_specs",
        "out_specs",
        "in_shardings",
        "out_shardings",
        "axis_name",
        "spec",
        "specs",
        "psum",
        "pmean",
        "pmax",
        "pmin",
        "all_gather",
        "psum_scatter",
        "ppermute",
        "all_to_all",
        "axis_index",
        "axis_size",
    }
)
"""Callees and keywords whose string arguments name mesh axes (or logical axes)."""

MESH_HEADS = frozenset({"make_mesh", "Mesh", "AbstractMesh", "axis_names"})
"""Callees and keywords whose string arguments define mesh axes."""

_STRING_PREFIXES = frozenset({"r", "u", "b", "f", "br", "rb", "fr", "rf"})


@dataclass(frozen=True)
class StringLiteral:
    span: Span
    """The whole literal, prefix and quotes included."""
    content: Span
    """Between the quotes (to the end of the line when unterminated)."""
    value: str
    """The text between the quotes as written (escapes are not processed)."""
    heads: tuple[str, ...]
    """Callee names (last dotted part) and keywords around the literal, innermost first."""
    bracket: int
    """An id of the innermost bracket holding the literal (-1 at top level)."""
    index: int
    """The literal's item position inside that bracket (items are separated by commas)."""

    @property
    def in_spec(self) -> bool:
        """Written where JAX or Flax reads axis names: a spec, a sharding keyword, a collective."""
        return any(head in SPEC_HEADS for head in self.heads)

    @property
    def names_axis(self) -> bool:
        """Written where axis names are defined or used, including constants such as `MESH_AXES`."""
        return self.in_spec or any(
            head in MESH_HEADS or "axis" in head.lower() or "axes" in head.lower() for head in self.heads
        )

    def touches(self, line: int, column: int) -> bool:
        """Whether a cursor at (line, column) is on the literal's text, quotes excluded."""
        content = self.content
        return content.line == line == content.end_line and content.column <= column <= content.end_column

    def shifted(self, lines: int) -> StringLiteral:
        """The same literal, `lines` further down (found in a slice of the text)."""
        return dataclasses.replace(self, span=_down(self.span, lines), content=_down(self.content, lines))


def _down(span: Span, lines: int) -> Span:
    return Span(span.line + lines, span.column, span.end_line + lines, span.end_column)


@dataclass
class _Bracket:
    head: str | None
    ident: int
    items: int = 0


def string_literals(lines: Sequence[str]) -> list[StringLiteral]:
    """Every string literal of the text (given by lines), in order."""
    return _Scanner(lines).run()


def literal_at(lines: Sequence[str], line: int, column: int) -> StringLiteral | None:
    """The literal whose text the cursor is on.

    Only the top-level statement holding the cursor is scanned (from the nearest line above
    that starts at column 0 with code), so a hover costs the same at line 10 and line 20,000.
    """
    if line >= len(lines) or ('"' not in lines[line] and "'" not in lines[line]):
        return None
    start = line
    while start > 0 and not _starts_statement(lines[start]):
        start -= 1
    scanned = _Scanner(lines[start : line + 1]).run()
    found = next((f for f in reversed(scanned) if f.touches(line - start, column)), None)
    return None if found is None else found.shifted(start)


def _starts_statement(text: str) -> bool:
    return bool(text) and text[0] not in " \t#)]}"


class _Scanner:
    """One pass over the text; `name`/`keyword` hold the identifier or `keyword=` just read."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.lines = lines
        self.stack: list[_Bracket] = []
        self.brackets = 0
        self.name: str | None = None
        self.keyword: str | None = None
        self.found: list[StringLiteral] = []

    def run(self) -> list[StringLiteral]:
        line = column = 0
        while line < len(self.lines):
            line, column = self._step(line, column)
        return self.found

    def _step(self, line: int, column: int) -> tuple[int, int]:
        """Read one token starting at (line, column); returns where the next one starts."""
        text = self.lines[line]
        if column >= len(text):
            return line + 1, 0
        char = text[column]
        if char == "#":
            return line + 1, 0
        if char.isspace() or char == "\\":
            return line, column + 1
        if char in "\"'":
            return self._string(line, column, column)
        if char.isidentifier():
            end = column
            while end < len(text) and (text[end].isidentifier() or text[end].isdigit() or text[end] == "."):
                end += 1
            word = text[column:end]
            if end < len(text) and text[end] in "\"'" and word.lower() in _STRING_PREFIXES:
                return self._string(line, end, column)
            self._name(word, text[end:])
            return line, end
        self._punctuation(char, text[column : column + 2])
        return line, column + 1

    def _name(self, word: str, rest: str) -> None:
        after = rest.lstrip()
        if after.startswith("=") and not after.startswith("=="):
            self.keyword, self.name = word, None
        else:
            self.keyword, self.name = None, word.rsplit(".", 1)[-1]

    def _punctuation(self, char: str, pair: str) -> None:
        if char in "([{":
            head = self.name if char in "([" and self.name else self.keyword
            self.brackets += 1
            self.stack.append(_Bracket(head, self.brackets))
            self.name = self.keyword = None
        elif char in ")]}":
            if self.stack:
                self.stack.pop()
            self.name = self.keyword = None
        elif char == ",":
            if self.stack:
                self.stack[-1].items += 1
            self.name = self.keyword = None
        elif char == "=" and pair != "==":
            return  # the `=` of `keyword=`: keep the keyword for the value that follows
        elif char != ".":
            self.name = self.keyword = None

    def _string(self, line: int, quote_column: int, start: int) -> tuple[int, int]:
        text = self.lines[line]
        quote = (
            text[quote_column] * 3
            if text.startswith(text[quote_column] * 3, quote_column)
            else text[quote_column]
        )
        first = (line, quote_column + len(quote))
        end_line, column = first
        closed = False
        while end_line < len(self.lines):
            current = self.lines[end_line]
            while column < len(current):
                if current[column] == "\\":
                    column += 2
                elif current.startswith(quote, column):
                    closed = True
                    break
                else:
                    column += 1
            if closed or len(quote) == 1:
                break
            end_line, column = end_line + 1, 0
        if end_line == len(self.lines):
            # Unterminated triple quotes run to the end; resuming at (last line, 0) would rescan
            # them forever when they open on the last line.
            end_line, column = end_line - 1, len(self.lines[-1])
        end_line = min(end_line, len(self.lines) - 1)
        column = min(column, len(self.lines[end_line]))
        value_lines = [self.lines[n] for n in range(first[0], end_line + 1)]
        value_lines[-1] = value_lines[-1][:column]
        value_lines[0] = value_lines[0][first[1] :]
        self._record(
            Span(line, start, end_line, column + (len(quote) if closed else 0)),
            Span(first[0], first[1], end_line, column),
            "\n".join(value_lines),
        )
        return end_line, column + (len(quote) if closed else 0)

    def _record(self, span: Span, content: Span, value: str) -> None:
        heads = tuple(b.head for b in reversed(self.stack) if b.head)
        if self.keyword:
            heads = (self.keyword, *heads)
        innermost = self.stack[-1] if self.stack else None
        self.found.append(
            StringLiteral(
                span,
                content,
                value,
                heads,
                innermost.ident if innermost else -1,
                innermost.items if innermost else 0,
            )
        )
        self.name = self.keyword = None
