"""What an analysis of a generated model file peaks at and keeps, counted by tracemalloc (bytes
Python allocated, not time): an upper bound with a margin, so that a per-analysis memo that
grows with the file, an edit's moved results kept twice, or a dropped module version left in a
cycle shows as a failure. The language server's peak RSS (issue #14's 120 MiB at 20k lines) is
these bytes plus the interpreter and the imports."""

from __future__ import annotations

import gc
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from shardls.analysis.analyzer import Analyzer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from generate_models import model_source

LINES = 2_000
MIB = 2**20
OPEN_PEAK = 13 * MIB
"""2,000 generated lines (72k characters) peaked at 10.1 MiB (11.0 while the evaluator's literals
and the typing pass's answers per statement were kept until the analysis ended; 11.7 before the
typing pass kept its sets of names once, `TypingPass._once`)."""
KEPT = 11.5 * MIB
"""... and kept 9.1 MiB once the analysis ended (11.6 before its walker and dropped module
versions left no cycles: those waited for a collection)."""
WALK_STATE = 1.4 * MIB
"""What the open's peak held beyond what it kept: what the walk keeps for itself while it runs
(0.95 MiB; 1.9 while those memos lived until the analysis ended, `analyzer._segment_ended`)."""
EDIT_PEAK = 3 * MIB
"""What four Enters, each undone by the whole text, peaked at above what the open kept (2.1 MiB:
each moves every result below it, the old results alive until the new ones are made; 3.4 MiB
before the moved results kept their class's shared layout, `line_shift.rebuilt`, and the moves'
memos and plans took a number and a list slot per object met instead of pairs, `Plans`)."""
EDIT_GROWTH = 1 * MIB
"""What they kept beyond it (0.1 MiB: the moves' plans, `Shifter.plans`; 2.4 MiB when each left the
module version it replaced in a cycle)."""


@pytest.fixture
def traced() -> Iterator[None]:
    Analyzer().analyze("/virtual/warm.py", model_source(300))  # the imports' own memos
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()  # what is kept is what reference counting leaves, as in the server
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()
        if was_enabled:
            gc.enable()


def test_an_open_and_its_enters_stay_within_their_bounds(traced: None) -> None:
    text = model_source(LINES)
    start = tracemalloc.get_traced_memory()[0]
    analyzer = Analyzer()
    analyzer.analyze("/virtual/model.py", text)
    kept, peak = tracemalloc.get_traced_memory()
    assert peak - start < OPEN_PEAK
    assert kept - start < KEPT
    assert peak - kept < WALK_STATE
    lines = text.split("\n")
    entered = "\n".join(lines[:10] + [""] + lines[10:])
    tracemalloc.reset_peak()
    for edited in (entered, text) * 4:
        analyzer.analyze("/virtual/model.py", edited)
    now, edits_peak = tracemalloc.get_traced_memory()
    assert edits_peak - kept < EDIT_PEAK
    assert now - kept < EDIT_GROWTH
