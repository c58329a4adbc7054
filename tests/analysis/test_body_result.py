"""What a jitted function returns, when its `return`s may disagree (`recognizers/body_result.py`).

Returns written as tuples of one length are compared first on the items they write differently:
where no array can have a sharded type, a difference there decides that the result is unknown,
and the items written alike (a model's logits, computed through every layer) are not evaluated.
The layouts are those of the full evaluation: an unknown result pairs each sharding with no array.
"""

from __future__ import annotations

import ast
import sys

import pytest
from analysis_helpers import analyze

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.facts import SiteKind
from shardls.analysis.values import Value

AUTO = ", axis_types=(jax.sharding.AxisType.Auto,) * 2"
"""`jax.make_mesh` makes Explicit axes unless told otherwise."""


def _source(first: str, axis_types: str = AUTO) -> str:
    return f"""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'){axis_types})

def heavy(x):
    return x * 2

def forward(x, cache):
    if cache is None:
        return heavy(x), {first}
    return heavy(x), cache

def run(cache):
    x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P('data')))
    out = NamedSharding(mesh, P('data'))
    return jax.jit(forward, out_shardings=(out, None))(x, cache)

run(None)
"""


def _asked(monkeypatch: pytest.MonkeyPatch, source: str) -> tuple[list[str], list[object]]:
    """The expressions the result's evaluation asked about, and the jit's output shapes."""
    asked: list[str] = []
    evaluate = Evaluator.evaluate

    def recording(self: Evaluator, node: ast.expr, frame: Frame) -> Value:
        if sys._getframe(1).f_code.co_filename.endswith("body_result.py"):
            asked.append(ast.unparse(node))
        return evaluate(self, node, frame)

    monkeypatch.setattr(Evaluator, "evaluate", recording)
    analysis = analyze(source)
    return asked, [s.shape for s in analysis.sites if s.kind is SiteKind.JIT_OUT]


def test_returns_that_differ_in_an_item_written_differently_skip_the_items_written_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked, shapes = _asked(monkeypatch, _source("0"))
    assert "heavy(x)" not in asked
    assert asked == ["cache", "0"]  # cache is None at the one call
    assert set(shapes) == {None}  # the result is unknown, as evaluating the returns whole says


def test_returns_that_agree_are_evaluated_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    asked, shapes = _asked(monkeypatch, _source("None"))
    assert asked[-2:] == ["(heavy(x), cache)", "(heavy(x), None)"]
    assert set(shapes) == {(8, 16)}


def test_where_arrays_may_be_typed_the_returns_are_evaluated_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """With Explicit axes an operation in a skipped item could be reported (`may_type`)."""
    asked, shapes = _asked(monkeypatch, _source("0", axis_types=""))
    assert asked == ["(heavy(x), cache)", "(heavy(x), 0)"]
    assert set(shapes) == {None}
