"""When the language server lets Python's cyclic garbage collector look at what it keeps.

An open 20k-line file keeps about a million objects alive between edits (its segments' trees,
scopes, kept results). Left to its own schedule, the collector counts every edit's new objects
towards a full collection, which traverses all of them again: ~0.6 s every few edits, most of the
server's CPU per edit (119 ms against ~20 ms of analysis). So once an analysis has settled (its
diagnostics sent), what the analysis thread keeps is frozen (`gc.freeze`) and no later collection
traverses it.

The price of freezing: a frozen object that later becomes part of a garbage cycle (a kept result
dropped, the caches of a closed document) is never freed by a collection that skips it. So the
frozen objects are returned to the collector and collected once in full (`full`), in the analysis
thread: once the server has been idle a while after a document opened or closed (`Analyses`), and
right after an analysis settles when the memory in use has grown by a tenth since the last full
collection (tighter than the collector's own rule, a quarter of the long-lived objects, so that
cycles are freed before they pile up). A long session's memory is then bounded as without
freezing. Edits, Enters and whole-text undos leave no cycles of their own (the module versions
the workspace drops let go of their scopes, `ModuleInfo.release`), so what grows is what the
documents keep.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator

GROWTH = 0.1
"""A full collection is due once the memory blocks in use exceed those after the last one by this
share (in a 20k-line file 0.5 s; Enters there ran one every fifth while each left the module
versions it replaced in cycles)..."""
SLACK = 20_000
"""... plus this many (~1.4 MiB): a small workspace does not collect in full every few edits."""
NEW_DATA = 150_000
"""An analysis after which more memory blocks are in use than after the last one settled, by
this many (about 100,000 objects), is taken for new live data (a file opened), not garbage: the
memory it grew by counts as if a full collection had run, and the one that frees the opening's
own cycles waits for an idle moment."""


class Collection:
    """The collector's schedule for one server. Its methods run in the analysis thread, so that
    no collection runs inside an analysis (which pauses the collector) and none of them races
    another."""

    def __init__(self, slack: int = SLACK) -> None:
        self._slack = slack
        self._after_full = sys.getallocatedblocks()
        """The memory blocks in use after the last full collection. Blocks, not frozen objects:
        counting those walks every one of them (65 ms with a 20k-line file open), and what grows
        is what matters."""
        self._settled = self._after_full
        """The memory blocks in use when the last analysis settled."""
        self.due = False
        """A full collection should run at the next idle moment."""

    @contextlib.contextmanager
    def analysing(self) -> Iterator[None]:
        """Run an analysis with the collector paused (as the analysis itself does) and freeze
        what it made before the collector runs again: the collections the first allocations
        after it trigger otherwise traverse everything it made, ~100 ms of an Enter's 0.6 s in a
        20k-line file (its moved results, the new module's scope), to find a hundred objects of
        cyclic garbage, which a full collection frees (`settle`'s schedule)."""
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            gc.freeze()
            if was_enabled:
                gc.enable()

    def settle(self) -> None:
        """Freeze what the analysis thread keeps now; collect in full at once when the memory
        in use grew by GROWTH since the last full collection, or at the next idle moment after a
        file was opened (`NEW_DATA`).

        Nothing is collected first: the analysis' objects were frozen as it ended (`analysing`),
        and a collection over those made since (the publish's) cost ~1.5 ms per edit of a
        3,000-line file, a fifth of its analysis. What grew is read in memory blocks, not by
        counting the young objects: `gc.get_objects()` lists the ~1M objects a 20k-line open
        leaves, 60 ms in the analysis thread right after the publish, where the first hovers
        waited for it (bench_server hover p95 1.9 → 62 ms)."""
        gc.freeze()
        blocks = sys.getallocatedblocks()
        grown, self._settled = blocks - self._settled, blocks
        if grown > NEW_DATA:
            self._after_full = blocks
            self.due = True
        elif blocks > self._after_full * (1 + GROWTH) + self._slack:
            self.full()

    def full(self) -> None:
        """Collect everything, frozen or not (cycles among frozen objects included), and freeze
        what survives."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self._after_full = self._settled = sys.getallocatedblocks()
        self.due = False
