"""Reading the source a fix rewrites, with Python's tokenizer: string literals exactly as written
(prefix, quotes, escapes), and the module's top-level statements (its docstring, `__future__`
imports and imports), so that an edit never lands inside a string."""

from __future__ import annotations

import ast
import io
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

_PLAIN_PREFIXES = frozenset({"", "r", "u"})
"""Prefixes whose literal is a `str` written as is (no bytes, no f-string)."""


@dataclass(frozen=True)
class Literal:
    prefix: str
    quote: str
    body: str
    """Between the quotes, as written."""


def tokens(text: str) -> list[tokenize.TokenInfo] | None:
    """Every token of `text`; None when the tokenizer refuses it."""
    try:
        return list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None


def _significant(found: list[tokenize.TokenInfo]) -> list[tokenize.TokenInfo]:
    skip = (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)
    return [token for token in found if token.type not in skip]


def plain_string(text: str) -> Literal | None:
    """`text` as one plain string literal (`"model"`, `r'model'`), written without escapes, so
    that its body is its value; None for anything else (bytes, f-strings, implicit
    concatenation, escapes, several lines)."""
    found = tokens(text)
    significant = _significant(found) if found is not None else []
    if len(significant) != 1 or significant[0].type != tokenize.STRING or significant[0].string != text:
        return None
    literal = _split(text)
    if literal is None or "\\" in literal.body or "\n" in literal.body:
        return None
    return literal


def _split(token: str) -> Literal | None:
    start = next((n for n, char in enumerate(token) if char in "\"'"), None)
    if start is None or token[:start].lower() not in _PLAIN_PREFIXES:
        return None
    quote = (
        token[start] * 3
        if token.startswith(token[start] * 3, start) and len(token) >= start + 6
        else token[start]
    )
    if not token.endswith(quote) or len(token) < start + 2 * len(quote):
        return None
    return Literal(token[:start], quote, token[start + len(quote) : len(token) - len(quote)])


def writable_in(literal: Literal, value: str) -> bool:
    """Whether `value` can be written as the body of `literal` as is."""
    return value.isprintable() and "\\" not in value and literal.quote[0] not in value


def plain_axes(text: str) -> tuple[tuple[str, ...], str] | None:
    """A spec entry written as plain literals, `"model"` or `("data", "model")`: its axes and
    the quote it uses; None for anything else."""
    found = tokens(text)
    if found is None:
        return None
    strings = [token for token in found if token.type == tokenize.STRING]
    literals = [_split(token.string) for token in strings]
    if not strings or any(literal is None or "\\" in literal.body for literal in literals):
        return None
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError):
        return None
    items = tree.elts if isinstance(tree, (ast.Tuple, ast.List)) else [tree]
    if len(items) != len(strings) or not all(
        isinstance(item, ast.Constant) and isinstance(item.value, str) for item in items
    ):
        return None  # implicit concatenation, or something other than strings
    first = literals[0]
    assert first is not None
    return tuple(str(item.value) for item in items if isinstance(item, ast.Constant)), first.quote[0]


@dataclass(frozen=True)
class Statement:
    """A top-level logical line: 0-based first and last lines, and its tree when it parses alone."""

    line: int
    end_line: int
    tree: ast.stmt | None
    docstring_candidate: bool


def top_level_statements(text: str) -> Iterator[Statement]:
    """The module's top-level statements in order, as far as the tokenizer reads the text."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    depth = 0
    current: list[tokenize.TokenInfo] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO("\n".join(lines)).readline):
            if token.type == tokenize.INDENT:
                depth += 1
            elif token.type == tokenize.DEDENT:
                depth -= 1
            elif token.type == tokenize.NEWLINE:
                if current and depth == 0:
                    yield _statement(lines, current)
                current = []
            elif token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.ENDMARKER):
                current.append(token)
    except (tokenize.TokenError, SyntaxError, ValueError):
        return


def _statement(lines: list[str], found: list[tokenize.TokenInfo]) -> Statement:
    first, last = found[0].start[0] - 1, found[-1].end[0] - 1
    try:
        body = ast.parse("\n".join(lines[first : last + 1])).body
    except (SyntaxError, ValueError, RecursionError):
        body = []
    tree = body[0] if len(body) == 1 else None
    return Statement(first, last, tree, all(token.type == tokenize.STRING for token in found))
