"""What is read of a function's statements for every call (its `return`s, its `yield`s, the `if`s
around each statement) is read without walking its expressions, which hold no statement and
are most of a model's nodes; a function whose text never says `yield` is not walked for one.
The answers are those of a walk of every node."""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest

from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.evaluation.calls import statement_guards
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.source import SegmentParser

SOURCE = """\
def forward(x, cfg):
    if cfg.mode == "a":
        y = [f(v) for v in x if g(v)]
        return y
    for layer in cfg.layers:
        try:
            x = layer(x, lambda z: z + 1)
        except ValueError:
            return None
    while x:
        x = h(x)
    return x
"""


def _function(source: str) -> FunctionInfo:
    module = ModuleInfo("/virtual/m.py", None, SegmentParser().parse(source))
    (segment,) = module.source.segments
    (node,) = segment.body
    assert isinstance(node, ast.FunctionDef)
    return FunctionInfo(node, module, segment, module.scope)


@pytest.fixture
def expressions_walked(monkeypatch: pytest.MonkeyPatch) -> list[ast.AST]:
    """The expressions whose children are asked for while the test runs."""
    walked: list[ast.AST] = []
    children = ast.iter_child_nodes

    def recording(node: ast.AST) -> Iterator[ast.AST]:
        if isinstance(node, ast.expr):
            walked.append(node)
        return children(node)

    monkeypatch.setattr(ast, "iter_child_nodes", recording)
    return walked


def test_returns_and_guards_are_read_from_the_statements_alone(expressions_walked: list[ast.AST]) -> None:
    info = _function(SOURCE)
    returns = info.returns
    guards = statement_guards(info.node)
    assert not expressions_walked
    every = [n for n in ast.walk(info.node) if isinstance(n, ast.Return)]
    assert sorted(r.lineno for r in returns) == sorted(r.lineno for r in every) == [4, 9, 12]
    first_if = info.node.body[0]
    assert guards[id(returns[-1])] == ((first_if, True),)  # `return y`, met last
    assert guards[id(info.node.body[-1])] == ((first_if, False),)  # after `if ...: return`


def test_a_function_that_never_says_yield_is_not_walked_for_one(expressions_walked: list[ast.AST]) -> None:
    assert _function(SOURCE).yields == []
    assert not expressions_walked
    generator = _function("def batches(n):\n    for i in range(n):\n        x = (yield i)\n")
    assert [node.lineno for node, _ in generator.yields] == [3]
