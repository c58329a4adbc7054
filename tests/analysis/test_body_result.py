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


def _grown(count: str, step: str = "") -> str:
    return f"""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'){AUTO})

def gen_layers(key, count):
    layers = []
    for _ in range(count):
        {step}layers.append({{'w': jax.random.normal(key, (8, 16))}})
    return tuple(layers)

out = NamedSharding(mesh, P('model', 'data'))
layers = jax.jit(gen_layers, out_shardings=out, static_argnums=1)(jax.random.key(0), {count})
"""


def _layer_sites(source: str) -> list[tuple[str, object]]:
    analysis = analyze(source)
    return sorted(
        (s.name, s.shape)
        for s in analysis.sites
        if s.kind is SiteKind.JIT_OUT and (s.name or "").startswith("layers")
    )


def test_a_result_grown_in_a_loop_is_run_in_order() -> None:
    """maxtext `examples/shardings.py`: `layers.append(gen_layer(key))` per layer, then
    `tuple(layers)`; the lazy reading knows no list grown in a loop."""
    assert _layer_sites(_grown("2")) == [("layers[0]['w']", (8, 16)), ("layers[1]['w']", (8, 16))]


def test_a_loop_of_unknown_length_gives_no_result() -> None:
    analysis = analyze(_grown("int(input())"))
    shapes = [s.shape for s in analysis.sites if s.kind is SiteKind.JIT_OUT]
    assert shapes and set(shapes) == {None}


def test_a_body_not_run_in_order_is_read_as_before() -> None:
    """A `while` in the loop: the body is read lazily, and the list grown in the loop is unknown."""
    analysis = analyze(_grown("2", step="while False:\n            pass\n        "))
    shapes = [s.shape for s in analysis.sites if s.kind is SiteKind.JIT_OUT]
    assert shapes and set(shapes) == {None}
