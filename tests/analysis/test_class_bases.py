"""A class's bases are evaluated once per question about them (`evaluation/objects.py`):
`base_qualnames` reads the classes `mro` finds and the library classes among their bases, and
evaluated every base a second time after `mro` had, at every instantiation of a class."""

from __future__ import annotations

import ast
from collections import Counter

import pytest
from analysis_helpers import analyze, site_named

from shardls.analysis.definitions import ClassInfo
from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.values import Value

SOURCE = """
import enum
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'))

class Base:
    rows = 8

class Sized(Base, enum.Enum):
    SMALL = 1

class Model(Sized):
    def __init__(self, cols):
        self.cols = cols

model = Model(16)
x = jax.device_put(jnp.zeros((model.rows, model.cols)), NamedSharding(mesh, P('data')))
"""


def test_each_base_is_evaluated_once_per_question(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[Counter[int]] = []
    base_qualnames = Evaluator.base_qualnames
    evaluate = Evaluator.eval

    def questions(self: Evaluator, cls: ClassInfo, frame: Frame) -> set[str]:
        asked.append(Counter())
        try:
            return base_qualnames(self, cls, frame)
        finally:
            assert max(asked[-1].values(), default=1) == 1, asked[-1]

    def evaluating(self: Evaluator, node: ast.expr, frame: Frame) -> Value:
        if asked and frame.scope.kind == "module" and isinstance(node, (ast.Name, ast.Attribute)):
            asked[-1][id(node)] += 1
        return evaluate(self, node, frame)

    monkeypatch.setattr(Evaluator, "base_qualnames", questions)
    monkeypatch.setattr(Evaluator, "eval", evaluating)
    site = site_named(analyze(SOURCE), "x")
    assert any(asked)  # `Model`'s three bases, through `Sized`
    assert site.shape == (8, 16)
