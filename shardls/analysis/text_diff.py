"""What an edit changed between two texts of one file, found in time proportional to the lines it
touched: the common prefix and suffix are compared as ever longer slices (each comparison one
C-level `memcmp`), and the new lines reuse the old line strings outside the change."""

from __future__ import annotations

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
    return LineEdit(first, old_last, new_last, lines, line_start, line_end)


def common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of `a` and `b`."""
    limit = min(len(a), len(b))
    low, step = 0, 256
    while True:
        high = min(limit, low + step)
        if a[low:high] != b[low:high]:
            break
        if high == limit:
            return limit
        low, step = high, step * 2
    while high - low > 1:
        middle = (low + high) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle
    return low


def common_suffix(a: str, b: str, limit: int) -> int:
    """The length of the longest common suffix of `a` and `b`, at most `limit`."""
    ends = len(a), len(b)
    low, step = 0, 256
    while True:
        high = min(limit, low + step)
        if a[ends[0] - high : ends[0] - low] != b[ends[1] - high : ends[1] - low]:
            break
        if high == limit:
            return limit
        low, step = high, step * 2
    while high - low > 1:
        middle = (low + high) // 2
        if a[ends[0] - middle : ends[0] - low] == b[ends[1] - middle : ends[1] - low]:
            low = middle
        else:
            high = middle
    return low
