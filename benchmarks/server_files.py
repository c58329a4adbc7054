"""What `bench_server.py` does to a file: the spots it hovers (specs, layers, device_put and
constraints, spread over the file) and the one-line edit it measures."""

from __future__ import annotations

import io
import itertools
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

HOVER_TARGETS = re.compile(r"\b(P)\(|nnx\.(Linear)\(|jax\.(device_put)\(|(with_sharding_constraint)\(")


def _group_starts(text: str) -> Iterator[tuple[int, int]]:
    for number, line in enumerate(text.split("\n")):
        for match in HOVER_TARGETS.finditer(line):
            group = next(g for g in range(1, 5) if match.group(g) is not None)
            yield number, match.start(group)


def hover_positions(text: str, count: int) -> list[tuple[int, int]]:
    """Up to `count` (line, character) spots spread over the file, on what users hover: specs,
    layer constructors, device_put and with_sharding_constraint calls. The first is the spot in
    the middle of the file (see `first_hover_position`); the rest go from top to bottom."""
    spots = sorted(set(_group_starts(text)))
    if len(spots) > count:
        step = len(spots) / count
        spots = [spots[int(i * step)] for i in range(count)]
    first = first_hover_position(text)
    return [first, *(spot for spot in spots if spot != first)][:count]


def first_hover_position(text: str) -> tuple[int, int]:
    """The spec nearest the middle of the file: the first hover is timed there, not at the top,
    where a cost that grows with the distance from the start of the file would not show."""
    spots = sorted(set(_group_starts(text)))
    middle = text.count("\n") // 2
    return min(spots, key=lambda spot: (abs(spot[0] - middle), spot), default=(middle, 0))


@dataclass(frozen=True)
class Edit:
    """The measured one-line edit: characters `start` to `end` of `line` become `new`; the second
    edit (followed by hovers) makes those `new` characters `then`."""

    line: int
    start: int
    end: int
    new: str
    then: str


SUPPRESSION = "  # shardls: ignore[SH001]"
"""What the edit of a real file appends to a line: a suppression that silences nothing, so the
diagnostics change (an SH401 appears) wherever the line is."""


def one_line_edit(text: str) -> Edit:
    """An edit in the middle of the file. In a generated file, one untagged device_put becomes
    indivisible (128 rows → 129 over `data`=2, a new SH001); in another file, the end of the
    logical line nearest the middle gets an unused suppression comment (a new SH401)."""
    lines = text.split("\n")
    middle = len(lines) // 2
    for number in itertools.chain(range(middle, len(lines)), range(middle)):
        line = lines[number]
        if "device_put(jnp.zeros((128," in line and "expect:" not in line:
            start = line.index("(128,") + 1
            return Edit(number, start, start + 3, "129", "130")
    ends = _logical_line_ends(text)
    if not ends:
        raise ValueError("no line to edit")
    number = min(ends, key=lambda end: (abs(end - middle), end))
    return Edit(number, len(lines[number]), len(lines[number]), SUPPRESSION, SUPPRESSION.replace("1", "2"))


def _logical_line_ends(text: str) -> list[int]:
    """0-based lines where a logical line of code ends without a comment: a comment can be added
    there."""
    ends = []
    commented: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                commented.add(token.start[0] - 1)
            elif token.type == tokenize.NEWLINE:
                ends.append(token.start[0] - 1)
    except (tokenize.TokenError, SyntaxError):
        pass
    return [end for end in ends if end not in commented]
