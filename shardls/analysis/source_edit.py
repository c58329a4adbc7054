"""Parsing after an edit: the segments around the changed lines are parsed again, the others are
kept (moved up or down by the lines the edit added or removed), and the result is exactly what
parsing the whole text gives (tests/analysis/test_incremental_parse.py checks it).

Parsing is a pass from the top, and what it decides for a line depends on what came before it
(is the line inside a string, does it follow a decorator, did an earlier segment that does not
parse merge with it) and, for a segment that does not parse, on the 12 starts after it (it tries
to merge with them). So the lines are parsed again from a segment far enough above the edit that
none of this reaches past it (`_window`), to the first segment boundary below the edit where the
new pass is in the same state as the old one was: outside any string token, after the same kind
of line, at a boundary of an old segment (`_resync`). Two things reach further, and then the
whole text is parsed: a triple quote that is never closed above the edit (its failed match read
the whole text after it), and a merge budget that ran out (what each merge may parse depends on
what the merges above it used).
"""

from __future__ import annotations

import bisect
import sys
import weakref
from collections.abc import Container, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from shardls.analysis.same_tree import same_segment
from shardls.analysis.source import _MAX_MERGES, Edit, Layout, ParsedSource, Segment
from shardls.analysis.source_scan import Scan, Token, after_decorator, scan, segment_starts
from shardls.analysis.text_diff import LineEdit, line_edit

if TYPE_CHECKING:
    from shardls.analysis.source import SegmentParser


def reparse(
    parser: SegmentParser, old: ParsedSource, text: str, budget: int, edit: LineEdit | None = None
) -> ParsedSource | None:
    """The parse of `text` (line ends `\\n`, merge budget `budget`) made from `old`'s, parsing
    again only the segments around what changed (`edit`, when the caller has found it already);
    None when the whole text must be parsed."""
    layout = old.layout
    if layout is None or layout.budget_left <= 0:
        return None
    if text == old.text:
        return old
    if edit is None:
        edit = line_edit(old.text, old.lines, text)
    first, new_last, delta, lines = edit.first, edit.new_last, edit.delta, edit.lines

    # A string the edit opens or closes can change which lines above it may start a statement:
    # then the pass starts far enough above the first of those too (a merge of the segment 12
    # starts above reaches it, and past the end of the file when fewer starts follow).
    reach = first
    while True:
        segment = _window(old, layout, reach)
        begin = old.segments[segment].first_line
        if layout.scan.unclosed and layout.scan.unclosed[0] < begin:
            return None
        offset = edit.start - sum(len(line) + 1 for line in lines[begin:first])
        window, resync = _resync(
            old, layout.scan, lines, text, begin, offset, edit.end + 1, new_last + 1, delta
        )
        joined = _Joined(layout.scan, window, begin)
        kept = bisect.bisect_left(layout.starts, begin)
        window_starts = segment_starts(lines, joined, begin, resync)
        if begin == 0 and (not window_starts or window_starts[0] != 0):
            window_starts.insert(0, 0)
        old_starts = layout.starts[kept : bisect.bisect_left(layout.starts, resync - delta)]
        moved_up = _first_changed_start(old_starts, window_starts)
        if moved_up is None or moved_up >= reach or _window(old, layout, moved_up) >= segment:
            break
        reach = moved_up
    old_resync = resync - delta
    after = bisect.bisect_left(layout.starts, old_resync)
    starts = (*layout.starts[:kept], *window_starts, *_moved(layout.starts[after:], delta))

    def at_old_boundary(index: int) -> bool:
        line = starts[index]
        return line >= resync and _segment_at(old.segments, line - delta) is not None

    replaced = _segments_before(old.segments, old_resync)
    used = set(layout.firsts)
    used.difference_update(_firsts(old.segments[segment:replaced]))
    run = parser.segments(lines, starts, kept, sys.maxsize, used, at_old_boundary)
    resumed = len(old.segments)
    if run.end < len(starts):
        found = _segment_at(old.segments, starts[run.end] - delta)
        assert found is not None
        resumed = found
    run.used.difference_update(_firsts(old.segments[replaced:resumed]))
    parsed_again = _unchanged(old.segments[segment:resumed], run.segments, run.used, new_last + 1, delta)
    rest = old.segments[resumed:]
    segments = (
        *old.segments[:segment],
        *parsed_again,
        *(rest if not delta else (s.moved(delta) for s in rest)),
    )
    costs = (*layout.costs[:segment], *run.costs, *layout.costs[resumed:])
    left = budget - sum(costs)
    if left <= 0:
        return None
    spanning = layout.scan.spanning
    tokens = (
        *spanning[: bisect.bisect_left(spanning, (begin,))],
        *window.spanning,
        *_moved_tokens(spanning[bisect.bisect_left(spanning, (old_resync,)) :], delta),
    )
    unclosed = (
        *window.unclosed,
        *_moved(layout.scan.unclosed[bisect.bisect_left(layout.scan.unclosed, old_resync) :], delta),
    )
    new_layout = Layout(Scan(tokens, unclosed), starts, costs, left, frozenset(run.used))
    changed = _edit(old, segment, resumed, parsed_again, delta, (first, edit.old_stop))
    return ParsedSource(lines, segments, text, new_layout, changed)


def _edit(
    old: ParsedSource,
    first: int,
    resumed: int,
    parsed_again: list[Segment],
    delta: int,
    lines: tuple[int, int],
) -> Edit:
    """Which segments differ from `old`'s: those parsed again from `first` (in place of the old
    ones up to `resumed`) but not kept as they were (the very objects above the edit, the same
    text and tree `delta` lines down below it); all after them are moved copies when `delta`."""
    same_before = 0
    while (
        same_before < min(len(parsed_again), resumed - first)
        and parsed_again[same_before] is old.segments[first + same_before]
    ):
        same_before += 1
    start = first + same_before
    same_after = 0
    while same_after < min(len(parsed_again) - same_before, resumed - start) and _kept_below(
        old.segments[resumed - 1 - same_after], parsed_again[-1 - same_after], delta
    ):
        same_after += 1
    end = first + len(parsed_again) - same_after
    return Edit(weakref.ref(old), start, resumed - same_after, end, delta, lines)


def _kept_below(old: Segment, new: Segment, delta: int) -> bool:
    """Whether `new` is `old` as an edit `delta` lines above it leaves it: the very object, or
    the same text and tree moved."""
    if not delta:
        return new is old
    return new.body is old.body and new.text == old.text and new.first_line == old.first_line + delta


def _window(old: ParsedSource, layout: Layout, first: int) -> int:
    """The index of the old segment the new pass starts at, for an edit from line `first` on:
    lines above it keep whether they may start a statement (no string token reaching the edit
    covers them), no segment above it tries to merge with a line whose start may change (it
    lies 12 starts above the first such line or more), and no token covers its first line."""
    line = first
    while (token := layout.scan.covering(line)) is not None:
        line = token[0]
    start = layout.starts[max(0, bisect.bisect_left(layout.starts, line) - _MAX_MERGES - 1)]
    segment = _segment_containing(old.segments, start)
    while (token := layout.scan.covering(old.segments[segment].first_line)) is not None:
        segment = _segment_containing(old.segments, token[0])
    return segment


def _resync(
    old: ParsedSource,
    old_scan: Scan,
    lines: tuple[str, ...],
    text: str,
    begin: int,
    offset: int,
    stop: int,
    stop_line: int,
    delta: int,
) -> tuple[Scan, int]:
    """The scan of the new text from line `begin` (at `offset`) to the first line, at or after
    `stop_line` (at `stop`), whose start both the new and the old scan reach outside any token,
    after the same kind of line (a decorator or not); and that line."""
    while True:
        window, resync = scan(text, offset, begin, stop)
        if resync >= len(lines):
            return window, resync
        token = old_scan.covering(resync - delta)
        if token is None and after_decorator(
            lines, _Joined(old_scan, window, begin), resync
        ) == after_decorator(old.lines, old_scan, resync - delta):
            return window, resync
        target = resync + 1 if token is None else token[1] + 1 + delta
        stop += sum(len(line) + 1 for line in lines[stop_line:target])
        stop_line = target


class _Joined(Container[int]):
    """The lines inside triple-quoted strings: the old scan's above `begin`, the new window's
    from `begin` on."""

    def __init__(self, old: Scan, window: Scan, begin: int) -> None:
        self._old, self._window, self._begin = old, window, begin

    def __contains__(self, line: object) -> bool:
        if not isinstance(line, int):
            return False
        return line in (self._old if line < self._begin else self._window)


def _unchanged(
    old: Sequence[Segment], new: list[Segment], used: set[int], below: int, delta: int
) -> list[Segment]:
    """`new`, with each segment the pass made again unchanged (same text at the same place, or
    at its place moved by `delta` for one beginning on line `below` or later, after the edited
    lines) replaced by the old object (moved), and each whose text changed but not its tree nor
    what the analysis reads of its text (`same_tree`: a comment typed) given the old tree under
    its new text. The old tree is kept (and noted in `used` in place of the one parsed again):
    whatever is kept by segment or by tree (the analysis of each, the scope's bindings) is kept
    for it."""
    by_line = {segment.first_line: segment for segment in old}
    found = []
    dropped: list[Segment] = []
    restored: list[Segment] = []
    for segment in new:
        moved = delta if segment.first_line >= below else 0
        before = by_line.get(segment.first_line - moved)
        if before is None or not (
            before.text == segment.text or (not moved and same_segment(before, segment))
        ):
            found.append(segment)
            continue
        if before.body is not segment.body:
            dropped.append(segment)
            restored.append(before)
        if before.text != segment.text:
            found.append(replace(segment, body=before.body))
        else:
            found.append(before.moved(moved) if moved else before)
    # All removed before any is added back: a tree dropped here may be one kept for another line
    # (the same text twice, whose parses the pass handed out the other way round).
    used.difference_update(_firsts(dropped))
    used.update(_firsts(restored))
    return found


def _first_changed_start(old: Sequence[int], new: Sequence[int]) -> int | None:
    """The first line where the starts the pass found (`new`) and the old starts of the same
    lines (`old`) part: the lower of the two that differ, or the first that only one has (None:
    they are the same)."""
    for before, now in zip(old, new):
        if before != now:
            return min(before, now)
    longer = old if len(old) > len(new) else new
    return longer[min(len(old), len(new))] if len(old) != len(new) else None


def _segment_containing(segments: Sequence[Segment], line: int) -> int:
    return max(0, bisect.bisect_right(segments, line, key=lambda s: s.first_line) - 1)


def _segment_at(segments: Sequence[Segment], line: int) -> int | None:
    """The index of the segment that begins at `line` (None: none does)."""
    index = bisect.bisect_left(segments, line, key=lambda s: s.first_line)
    return index if index < len(segments) and segments[index].first_line == line else None


def _segments_before(segments: Sequence[Segment], line: int) -> int:
    """How many segments begin before `line`."""
    return bisect.bisect_left(segments, line, key=lambda s: s.first_line)


def _firsts(segments: Sequence[Segment]) -> set[int]:
    return {id(segment.body[0]) for segment in segments if segment.body}


def _moved(lines: Sequence[int], delta: int) -> Sequence[int]:
    return lines if not delta else [line + delta for line in lines]


def _moved_tokens(tokens: Sequence[Token], delta: int) -> Sequence[Token]:
    return tokens if not delta else [(first + delta, last + delta, triple) for first, last, triple in tokens]
