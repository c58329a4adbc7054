"""An edit that adds or removes lines (an Enter, a deleted blank line, a pasted block) analyses
only what it touched: the segments below keep their results, moved to their new lines, and the
lines their texts name (of their own segment and of others, above and below the edit) are moved
too; the outcome is field by field a fresh analysis's. Counted by the segments analysed, never
by time."""

from __future__ import annotations

import dataclasses
import gc
import tracemalloc

import pytest

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.line_shift import LineMap, Shifter, Unshiftable
from shardls.analysis.literal_lines import NONE, LiteralLines

PATH = "/virtual/m.py"

MODEL = """import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
ROWS = 64


def place(cols):
    return jax.device_put(jnp.zeros((ROWS, cols)), NamedSharding(mesh, P("data", "model")))


a = place(16)
b = place(6)
c = jax.device_put(jnp.zeros((ROWS, 6)), NamedSharding(mesh, P("model", "data")))
jax.set_mesh(mesh)
d = jax.device_put(jnp.zeros((ROWS, 3)), P("data", "model"))
"""


class _Counting(Analyzer):
    """Counts the segments analysed (not kept) by each analysis."""

    analysed = 0

    def _analyze_segment(self, segment, *rest):  # type: ignore[no-untyped-def]
        self.analysed += 1
        return super()._analyze_segment(segment, *rest)


def _edit(analyzer: _Counting, text: str) -> int:
    analyzer.analysed = 0
    assert analyzer.analyze(PATH, text) == Analyzer().analyze(PATH, text)
    return analyzer.analysed


def _lines(text: str, at: int, added: list[str], removed: int = 0) -> str:
    lines = text.split("\n")
    return "\n".join(lines[:at] + added + lines[at + removed :])


def test_the_texts_name_lines_of_other_segments() -> None:
    """What makes the moves worth testing: sites below the edit name lines of the function they
    call (above the edit or below it) and of the mesh."""
    texts = [
        text
        for site in Analyzer().analyze(PATH, MODEL).sites
        for text in (*site.provenance, *site.assumptions, site.mesh.source if site.mesh else "")
    ]
    assert any("line 13" in text for text in texts), texts  # place(16), below place()
    assert any("line 6" in text for text in texts), texts  # ROWS
    assert any("line 5" in text for text in texts), texts  # the mesh


@pytest.mark.parametrize(
    ("at", "added", "removed"),
    [
        (0, [""], 0),  # an Enter at the top
        (4, [""], 0),  # above the mesh
        (6, ["# a note", ""], 0),  # a comment pasted below the mesh
        (7, [], 1),  # a blank line deleted
        (11, [""], 0),  # between the function and its callers
        (10, [], 1),  # a blank line deleted between the function and its callers
    ],
)
def test_an_edit_that_moves_lines_analyses_nothing_again(at: int, added: list[str], removed: int) -> None:
    analyzer = _Counting()
    analyzer.analyze(PATH, MODEL)
    edited = _lines(MODEL, at, added, removed)
    assert _edit(analyzer, edited) == 0
    # Undone and redone (a text the workspace still holds, as an undo sends it whole): the
    # results move back and forth like the edit's own.
    assert _edit(analyzer, MODEL) == 0
    assert _edit(analyzer, edited) == 0


def test_a_change_of_two_regions_and_its_revert_analyse_nothing_again() -> None:
    """A line added at the top and one removed lower down in one change (a formatter, edits
    coalesced, a revert: the text sent whole), then the first text again: each is parsed one
    region at a time, and the segments between the regions move by the first one's lines."""
    analyzer = _Counting()
    analyzer.analyze(PATH, MODEL)
    two = _lines(_lines(MODEL, 0, [""]), 11, [], 1)
    assert _edit(analyzer, two) == 0
    assert _edit(analyzer, MODEL) == 0
    assert _edit(analyzer, _lines(MODEL, 0, [""])) == 0
    assert _edit(analyzer, two) == 0
    assert _edit(analyzer, MODEL) == 0


def test_a_pasted_statement_is_the_only_segment_analysed() -> None:
    analyzer = _Counting()
    analyzer.analyze(PATH, MODEL)
    pasted = ["jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P('data')))", ""]
    assert _edit(analyzer, _lines(MODEL, 7, pasted)) == 1
    assert _edit(analyzer, MODEL) == 0  # undone: the others move back


def test_an_edit_inside_a_function_analyses_its_callers_again() -> None:
    """A line added inside `place` changes its tree: it is analysed again (its callers' sites
    are its own, found by searching them), and nothing else."""
    analyzer = _Counting()
    analyzer.analyze(PATH, MODEL)
    assert _edit(analyzer, _lines(MODEL, 9, ["    cols = cols"])) == 1


def _noted(literal: str) -> str:
    return MODEL.replace("ROWS = 64\n", f"ROWS = 64\nNOTE = {literal}\n")


@pytest.mark.parametrize(
    "literal", ['"linear"', '("line: rows", "line of the mesh")', '"lines 14"', '"line 40"']
)
def test_a_literal_that_cannot_read_as_a_named_line_keeps_the_moves(literal: str) -> None:
    """A literal with a word "line" in it that cannot be shown as any line the texts name (a
    longer word, punctuation or a word after it, another number) moves the texts as before."""
    analyzer = _Counting()
    analyzer.analyze(PATH, _noted(literal))
    assert _edit(analyzer, _lines(_noted(literal), 0, [""])) == 0


@pytest.mark.parametrize("literal", ['f"line {ROWS}"', '"line %d" % ROWS', '"line 1"'])
def test_a_literal_that_could_read_as_a_named_line_keeps_it_from_moving(literal: str) -> None:
    """A literal that could be shown as "line 14" (any number may follow it, or it is "line 1"
    and digits may be joined to it): a text naming line 14, which the Enter moves, could be
    showing it, so its result is analysed again."""
    analyzer = _Counting()
    analyzer.analyze(PATH, _noted(literal))
    assert _edit(analyzer, _lines(_noted(literal), 0, [""])) > 0


def test_a_literal_shown_in_a_text_stays_where_the_line_it_names_moves() -> None:
    """`P("model", "line 14")` names an axis the mesh lacks, and the error shows it; line 14
    (`b = place(6)`) is named in texts too. An Enter above it moves the line but not the
    literal, so the results with a text reading "line 14" are analysed again (the one showing it
    and `b`'s own, which names the line by the same words), not the others; the outcome is the
    fresh analysis's (`_edit`). An Enter below it moves neither, and nothing is analysed again."""
    model = MODEL.replace('P("model", "data")', 'P("model", "line 14")')
    fresh = Analyzer().analyze(PATH, model)
    assert any("'line 14' in P(" in diagnostic.message for diagnostic in fresh.diagnostics)
    assert any("at line 14" in text for site in fresh.sites for text in site.provenance)
    analyzer = _Counting()
    analyzer.analyze(PATH, model)
    assert _edit(analyzer, _lines(model, 0, [""])) == 2
    assert _edit(analyzer, model) == 2
    assert _edit(analyzer, _lines(model, 15, [""])) == 0
    assert _edit(analyzer, model) == 0


def test_a_line_the_edit_replaced_cannot_be_moved() -> None:
    shifter = Shifter(LineMap(3, 5, 2), PATH, NONE)
    assert shifter.value("literal at line 3") == "literal at line 3"
    assert shifter.value("literal at line 6") == "literal at line 8"
    with pytest.raises(Unshiftable):
        shifter.value("literal at line 4")


def test_a_line_a_literal_could_make_is_not_moved() -> None:
    literal = Shifter(LineMap(3, 5, 2), PATH, LiteralLines(exact=frozenset({"6"})))
    assert literal.value("literal at line 2") == "literal at line 2"
    assert literal.value("literal at line 7") == "literal at line 9"
    with pytest.raises(Unshiftable):
        literal.value("literal at line 6")


@pytest.mark.parametrize("at", [0, 4, 11, 14])
def test_enters_each_undone_by_the_whole_text_keep_moving_every_result(at: int) -> None:
    """As an editor's Enters undone by the whole text: every move after the first walks only
    what the move before found holding lines (`Shifter.plans`), and each outcome is still a fresh
    analysis's, with nothing analysed again."""
    analyzer = _Counting()
    analyzer.analyze(PATH, MODEL)
    entered = _lines(MODEL, at, [""])
    for _ in range(4):
        assert _edit(analyzer, entered) == 0
        assert _edit(analyzer, MODEL) == 0
    assert _edit(analyzer, _lines(MODEL, at, ["", ""])) == 0
    assert _edit(analyzer, MODEL) == 0


def test_a_shift_after_another_walks_only_what_holds_lines() -> None:
    """The plans a shifter leaves: the next shifter hands back what held no lines as it is, and
    moves the rest as a shifter without plans would."""
    sites = Analyzer().analyze(PATH, MODEL).sites
    first = Shifter(LineMap(0, 1, 1), PATH, NONE)
    once = first.values(sites)
    inert = [value for value in first.plans.held if first.plans.hot[id(value)] == ()]
    assert inert, "no site holds a spec, a layout or a text without lines"
    second = Shifter(LineMap(0, 1, -1), PATH, NONE, first.plans)
    back = second.values(once)
    assert back == list(sites)
    assert back == Shifter(LineMap(0, 1, -1), PATH, NONE).values(once)
    held = {id(value) for value in second.plans.held}
    assert all(second.plans.hot[id(value)] == () for value in inert if id(value) in held)
    assert len(first.plans.held) == len(first.plans.hot), "each object is held once"
    assert [s.spec for s in back] == [s.spec for s in sites]
    assert all(a.spec is b.spec for a, b in zip(back, once))


def test_a_moved_site_takes_no_more_memory_than_a_fresh_one() -> None:
    """A site a shift rebuilt keeps its fields in its class's shared layout, as one its
    `__init__` made: filling each one's `__dict__` made it three times the size, and the results
    an Enter at the top of a 20k-line file moved kept 17 MiB more than a fresh analysis's. Moving
    a copy makes it again with its spans and texts: 2.9 times the copy's bytes, 5.1 when each
    had a dictionary of its own."""
    sites = Analyzer().analyze(PATH, MODEL).sites
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        copies = [dataclasses.replace(site) for site in sites * 200]  # each made by its `__init__`
        made = tracemalloc.get_traced_memory()[0] - start
        moved = Shifter(LineMap(0, 1, 1), PATH, NONE).values(copies)
        shifted = tracemalloc.get_traced_memory()[0] - start - made
    finally:
        tracemalloc.stop()
    assert [site.span.line for site in moved] == [site.span.line + 1 for site in copies]
    assert [site.layout for site in moved] == [site.layout for site in copies]
    assert shifted < 4 * made
