"""Parsing after an edit from the previous parse (`source_edit.reparse`) gives exactly what parsing
the whole text gives: the same segments (lines, text, trees, repairs, errors) and the same state
for the next edit, over seeded random edits of texts full of what makes parsing depend on far
away lines (docstrings with column-0 lines, unclosed quotes and brackets, strings continued by a
backslash, decorators, `else:` at column 0)."""

from __future__ import annotations

import ast
import random

import pytest
from edit_sequences import Editor, fixtures

from shardls.analysis.source import ParsedSource, SegmentParser

TRICKY = '''"""Module docstring.
Column-0 line inside it.
"""
import jax

x = "a string \\
continued"
y = (1,
2)


@decorator
@other(1)
def f(a,
b):
    return a


if x:
    pass
else:
    z = 1
try:
    w = 2
except Exception:
    pass


class C:
    """Doc.
def not_a_def():
    """

    def m(self):
        return 1
s = \'\'\'
def inside(): pass
\'\'\'
t = "# not a comment"  # a comment with """ quotes
'''

PIECES = [
    '"""',
    "'''",
    '"',
    "(",
    ")",
    "[",
    "]",
    "\\",
    "#",
    "@d\n",
    "else:\n",
    "def g(",
    ":\n",
    "\n",
    "    ",
    "x = 1\n",
]


def _summary(parsed: ParsedSource) -> tuple[object, ...]:
    segments = tuple(
        (
            s.first_line,
            s.text,
            s.lines,
            tuple(ast.dump(statement, include_attributes=True) for statement in s.body),
            s.repaired_lines,
            s.error,
        )
        for s in parsed.segments
    )
    layout = parsed.layout
    assert layout is not None
    state = (layout.scan, layout.starts, layout.costs, layout.budget_left)
    return parsed.lines, parsed.text, segments, state, tuple(parsed.errors)


def _no_shared_nodes(parsed: ParsedSource) -> None:
    firsts = [id(s.body[0]) for s in parsed.segments if s.body]
    assert len(firsts) == len(set(firsts))
    layout = parsed.layout
    assert layout is not None and layout.firsts == frozenset(firsts)


def _edit_is_what_changed(before: ParsedSource, after: ParsedSource) -> None:
    """`ParsedSource.edit` names exactly the segments that are not those of before: the very
    objects above it, and below it the very objects or, after lines added or removed, the same
    texts and trees moved by as many lines."""
    edit = after.edit
    if edit is None or after is before:  # an edit that changed nothing gives the same parse
        return
    assert edit.previous() is before
    old, new = before.segments, after.segments
    assert all(old[i] is new[i] for i in range(edit.first))
    for a, b in zip(old[edit.old_end :], new[edit.new_end :], strict=True):
        assert a is b if not edit.delta else (a.body is b.body and a.text == b.text)
        assert b.first_line == a.first_line + edit.delta
    assert len(old) - edit.old_end == len(new) - edit.new_end
    if edit.old_end > edit.first and edit.new_end > edit.first:
        assert old[edit.first] is not new[edit.first]


def _mutate(text: str, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return Editor(text, rng).step().apply(text)
    at = rng.randint(0, len(text))
    if rng.random() < 0.3:
        return text[:at] + text[at + rng.randint(1, 12) :]
    return text[:at] + rng.choice(PIECES) + text[at:]


@pytest.mark.parametrize("seed", range(30))
def test_parsing_after_each_edit_is_parsing_the_whole_text(seed: int) -> None:
    rng = random.Random(seed)
    texts = [TRICKY, *(fixture.text for fixture in fixtures())]
    text = texts[seed % len(texts)]
    incremental = SegmentParser()
    parsed = incremental.parse(text)
    for _ in range(40):
        text = _mutate(text, rng)
        before, parsed = parsed, incremental.parse(text, parsed)
        whole = SegmentParser().parse(text)
        assert _summary(parsed) == _summary(whole), text
        _no_shared_nodes(parsed)
        _edit_is_what_changed(before, parsed)


def test_an_edit_keeps_the_trees_of_the_other_segments() -> None:
    parser = SegmentParser()
    parsed = parser.parse(TRICKY)
    edited = parser.parse(TRICKY.replace("w = 2", "w = 3"), parsed)
    assert edited.segments[-1] is parsed.segments[-1]
    moved = parser.parse(TRICKY.replace("\nclass C:", "\n\n\nclass C:"), parsed)
    below = [s for s in parsed.segments if s.text.startswith(("class", "s =", "t ="))]
    assert [s.body for s in moved.segments[-len(below) :]] == [s.body for s in below]
    assert [s.first_line for s in moved.segments[-len(below) :]] == [s.first_line + 2 for s in below]
