"""An edit that leaves a segment's tree as it was (a comment, trailing whitespace) analyses
nothing again, yet gives the fresh analysis; one whose comment the module's text searches read
(`jax.jit(f` in a comment) or that a budget depends on is analysed again."""

from __future__ import annotations

import ast

import pytest

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.evaluation.limits import Limits
from shardls.analysis.same_tree import same_nodes
from shardls.analysis.segment_cache import Steps
from shardls.analysis.source import SegmentParser

PATH = "/virtual/m.py"

MODEL = """import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
ROWS = 64


class Mlp(nnx.Module):
    def constrain(self, x):
        return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P("data", "model")))

    def __call__(self, x):
        x = self.constrain(x)
        return x * 2


def place(cols):
    return jax.device_put(jnp.zeros((ROWS, cols)), NamedSharding(mesh, P("data", "model")))


a = place(16)
b = jax.device_put(jnp.zeros((ROWS, 6)), NamedSharding(mesh, P("model")))
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


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("        x = self.constrain(x)", "        x = self.constrain(x)  # a note"),
        ("        return x * 2", "        return x * 2   "),
        ("ROWS = 64", "ROWS = 64  # rows of the batch"),
    ],
)
def test_an_edit_that_keeps_the_tree_analyses_nothing_again(old: str, new: str) -> None:
    analyzer = _Counting()
    analyzer.analyze(PATH, MODEL)
    assert _edit(analyzer, MODEL.replace(old, new)) == 0
    assert _edit(analyzer, MODEL) == 0  # and undoing it


def test_a_suppression_typed_is_still_read() -> None:
    analyzer = _Counting()
    analyzer.analyze(PATH, MODEL)
    line = 'b = jax.device_put(jnp.zeros((ROWS, 6)), NamedSharding(mesh, P("model")))'
    edited = MODEL.replace(line, line + "  # shardls: ignore[SH001]")
    assert _edit(analyzer, edited) == 0
    assert "SH401" in {d.code for d in analyzer.analyze(PATH, edited).diagnostics}


@pytest.mark.parametrize(
    "comment",
    ["  # jax.jit(place)", "  # nnx.vmap(place, in_axes=0)", "  # called(here)", "  # größe"],
)
def test_a_comment_the_text_searches_or_columns_read_is_analysed_again(comment: str) -> None:
    """Searches of the text see comments (`first_arguments`, the call index); a non-ASCII
    character may move the character columns of what follows it (checked as if it did)."""
    analyzer = _Counting()
    analyzer.analyze(PATH, MODEL)
    assert _edit(analyzer, MODEL.replace("a = place(16)", "a = place(16)" + comment)) >= 1


def test_the_parser_keeps_the_old_tree_under_the_new_text() -> None:
    parser = SegmentParser()
    before = parser.parse(MODEL)
    after = parser.parse(MODEL.replace("ROWS = 64", "ROWS = 64  # rows"), before)
    kept = [s for s in after.segments if "ROWS = 64" in s.text]
    old = [s for s in before.segments if "ROWS = 64" in s.text]
    assert kept[0].text.startswith("ROWS = 64  # rows\n")
    assert kept[0].body is old[0].body
    moved = parser.parse(MODEL.replace("ROWS = 64", "ROWS  = 64"), before)
    assert [s for s in moved.segments if "ROWS  = 64" in s.text][0].body is not old[0].body


def test_trees_compare_with_their_positions() -> None:
    def parse(text: str) -> list[ast.stmt]:
        return ast.parse(text).body

    assert same_nodes(parse("x = f(1)  # a"), parse("x = f(1)"))
    assert not same_nodes(parse("x = f(1)"), parse("x = f (1)"))
    assert not same_nodes(parse("x = 1"), parse("x = True"))
    assert not same_nodes(parse("x = (1)"), parse("x = 1"))
    assert same_nodes(parse("x = ..."), parse("x = ...  "))


def test_a_result_holds_under_another_budget_only_when_no_question_was_cut_short() -> None:
    question = Limits().steps
    assert Steps(1_000, 100_000).hold_under(50_000, question)
    assert not Steps(40_000, 100_000).hold_under(50_000, question)
    assert not Steps(None, 100_000).hold_under(500_000, question)
