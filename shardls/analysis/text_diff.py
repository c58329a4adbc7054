"""What an edit changed between two texts of one file, found in time proportional to the lines it
touched: the common prefix and suffix are compared as ever longer slices (each comparison one
C-level `memcmp`), and the new lines reuse the old line strings outside the change."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class LineEdit:
    """Lines `first` to `old_last` of the old text became `first` to `new_last` of the new one;
    the lines before and after are the same (those after moved by `delta`)."""

    first: int
    old_last: int
    new_last: int
    lines: tuple[str, ...]
    """The new text's lines."""
    start: int
    """Where line `first` begins, in both texts."""
    end: int
    """Where line `new_last` ends in the new text (the offset of its `\\n`, or the text's end)."""
    old_stop: int
    """The first line of the old text the edit left whole (those before it from `first` on it
    changed): `old_last + 1`, or `old_last` when the edit ended just before that line began."""

    @property
    def delta(self) -> int:
        return self.new_last - self.old_last


def line_edit(old: str, old_lines: tuple[str, ...], new: str) -> LineEdit:
    """The lines `new` changed of `old` (both with `\\n` line ends only, `old_lines` its lines)."""
    start = common_prefix(old, new)
    tail = common_suffix(old, new, min(len(old), len(new)) - start)
    first = old.count("\n", 0, start)
    old_last = first + old.count("\n", start, len(old) - tail)
    new_last = first + new.count("\n", start, len(new) - tail)
    line_start = old.rfind("\n", 0, start) + 1
    line_end = new.find("\n", len(new) - tail)
    line_end = len(new) if line_end < 0 else line_end
    lines = old_lines[:first] + tuple(new[line_start:line_end].split("\n")) + old_lines[old_last + 1 :]
    kept_from = len(old) - tail
    old_stop = old_last if kept_from == 0 or old[kept_from - 1] == "\n" else old_last + 1
    return LineEdit(first, old_last, new_last, lines, line_start, line_end, old_stop)


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of `a` and `b`."""
    return _agreeing(min(len(a), len(b)), lambda low, high: a[low:high] == b[low:high])


def common_suffix(a: str, b: str, limit: int) -> int:
    """The length of the longest common suffix of `a` and `b`, at most `limit`."""
    end_a, end_b = len(a), len(b)
    return _agreeing(limit, lambda low, high: a[end_a - high : end_a - low] == b[end_b - high : end_b - low])


def _agreeing(limit: int, agree: Callable[[int, int], bool]) -> int:
    """The most positions, at most `limit`, over which two texts agree, where `agree(low, high)`
    compares positions `low` to `high`: slices twice as long each time until one differs, then
    halving the slice that does."""
    low, step = 0, 256
    while True:
        high = min(limit, low + step)
        if not agree(low, high):
            break
        if high == limit:
            return limit
        low, step = high, step * 2
    while high - low > 1:
        middle = (low + high) // 2
        if agree(low, middle):
            low = middle
        else:
            high = middle
    return low
