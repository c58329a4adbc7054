"""What an edit changed between two texts of one file, found in time proportional to the lines it
touched: the common prefix and suffix are compared as ever longer slices (each comparison one
C-level `memcmp`), and the new lines reuse the old line strings outside the change."""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

_MAX_REGIONS = 8
"""The most regions `steps_between` steps through: each costs a parse of the lines around it."""
_GAP = 3
"""Regions fewer unchanged lines apart than this are one: no statement fits between them."""


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


@dataclass(frozen=True)
class Steps:
    """What `steps_between` found: the texts to step through, and the edit from the old text to
    the new one, which is the last step's own edit when there are no texts to step through."""

    texts: list[str]
    edit: LineEdit

    @property
    def last_edit(self) -> LineEdit | None:
        """The edit from the last text stepped through (the old one when none) to the new one,
        when it is known already (a parse made from that text need not compare them again)."""
        return None if self.texts else self.edit


def steps_between(old: str, old_lines: tuple[str, ...], new: str) -> Steps:
    """Texts from `old` (its lines `old_lines`) to `new` (both with `\\n` line ends only) that
    change one region of lines at a time, from the top: after each, the next region's lines
    are the new text's (empty when the change is one region). A change of several regions far
    apart (a revert, a formatter, edits coalesced) is then a sequence of one-region edits, each
    with its line delta, like the edits a user types."""
    edit = line_edit(old, old_lines, new)
    first, new_lines = edit.first, edit.lines
    regions = _regions(old_lines[first : edit.old_last + 1], new_lines[first : edit.new_last + 1])
    texts = [
        "\n".join((*new_lines[: first + new_end], *old_lines[first + old_end :]))
        for _, old_end, _, new_end in regions[:-1]
    ]
    return Steps(texts, edit)


def _regions(old: Sequence[str], new: Sequence[str]) -> list[list[int]]:
    """The regions where `new` differs from `old` ([old start, old end, new start, new end]),
    at most `_MAX_REGIONS`: between the runs of lines the two have in common (`_same_runs`),
    joined where fewer than `_GAP` lines apart, and the closest joined while too many."""
    regions: list[list[int]] = []
    old_at = new_at = 0
    for old_start, new_start, length in (*_same_runs(old, new), (len(old), len(new), 0)):
        if old_start > old_at or new_start > new_at:
            if regions and old_at - regions[-1][1] < _GAP:
                regions[-1][1], regions[-1][3] = old_start, new_start
            else:
                regions.append([old_at, old_start, new_at, new_start])
        old_at, new_at = old_start + length, new_start + length
    while len(regions) > _MAX_REGIONS:
        closest = min(range(1, len(regions)), key=lambda i: regions[i][0] - regions[i - 1][1])
        regions[closest - 1][1], regions[closest - 1][3] = regions[closest][1], regions[closest][3]
        del regions[closest]
    return regions


def _same_runs(old: Sequence[str], new: Sequence[str]) -> list[tuple[int, int, int]]:
    """Runs of lines the same in both, in order in both ((old start, new start, length)): grown
    from the lines found once in each whose order both agree on (the longest such sequence, as
    a patience diff finds it), in time O(n log n) for lines of any kind."""
    once = {line for line, count in Counter(old).items() if count == 1}
    once.intersection_update(line for line, count in Counter(new).items() if count == 1)
    where = {line: number for number, line in enumerate(new) if line in once}
    pairs = [(number, where[line]) for number, line in enumerate(old) if line in once]
    ends: list[int] = []
    """The least new line a sequence of each length ends at (patience sorting)."""
    links: list[int] = []
    """The index in `pairs` of the pair ending the sequence of each length, and per pair the
    one before it in its sequence."""
    before: list[int] = []
    for index, (_, new_line) in enumerate(pairs):
        length = bisect.bisect_left(ends, new_line)
        before.append(links[length - 1] if length else -1)
        if length == len(ends):
            ends.append(new_line)
            links.append(index)
        else:
            ends[length], links[length] = new_line, index
    anchors = []
    index = links[-1] if links else -1
    while index >= 0:
        anchors.append(pairs[index])
        index = before[index]
    runs: list[tuple[int, int, int]] = []
    old_at = new_at = 0
    for old_line, new_line in reversed(anchors):
        if old_line < old_at:
            continue  # inside the run before
        start = 0
        while (
            old_line - start > old_at
            and new_line - start > new_at
            and old[old_line - start - 1] == new[new_line - start - 1]
        ):
            start += 1
        end = 1
        while (
            old_line + end < len(old)
            and new_line + end < len(new)
            and old[old_line + end] == new[new_line + end]
        ):
            end += 1
        runs.append((old_line - start, new_line - start, start + end))
        old_at, new_at = old_line + end, new_line + end
    return runs
