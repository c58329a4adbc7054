"""A module's scope and call index made from the previous text's (`scope_edit`) are what building
them from scratch gives, over seeded random edits: the same bindings of each name in the same
order, the same history (which bindings reach each point), the same numbering of statements and
the same callers of each name."""

from __future__ import annotations

import ast
import random

import pytest
from edit_sequences import Editor, fixtures
from test_incremental_parse import TRICKY

from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.scopes import Binding, Scope
from shardls.analysis.source import SegmentParser
from shardls.analysis.workspace import Workspace

EXTRA = """
import os
dims = []
dims.append(3)
if os.environ:
    mesh = 1
else:
    mesh = 2
for i in range(3):
    total = i
try:
    import jax
except ImportError:
    jax = None
a, (b, *c) = 1, (2, 3, 4)
"""


def _node(node: ast.AST) -> tuple[object, ...]:
    return (type(node).__name__, getattr(node, "lineno", None), getattr(node, "col_offset", None))


def _binding(b: Binding) -> tuple[object, ...]:
    return (
        b.name,
        b.kind,
        b.order,
        b.line,
        b.unpack,
        b.in_loop,
        _node(b.node),
        tuple((_node(statement), branch) for statement, branch in b.guards),
    )


def _scope(scope: Scope, module: ModuleInfo) -> tuple[object, ...]:
    numbers = [
        [scope.order_of.get(id(node)) for statement in segment.body for node in ast.walk(statement)]
        for segment in module.source.segments
    ]
    return (
        [(name, [_binding(b) for b in bindings]) for name, bindings in scope.bindings.items()],
        list(scope.history),
        {
            name: [(order, [_binding(b) for b in found]) for order, found in entries]
            for name, entries in scope.history.items()
        },
        {name: [_binding(b) for b in found] for name, found in scope.final.items()},
        sorted(scope.order_of.values()),
        numbers,
        module.call_index,
    )


@pytest.mark.parametrize("seed", range(24))
def test_a_scope_after_each_edit_is_the_scope_built_from_scratch(seed: int) -> None:
    rng = random.Random(seed)
    texts = [TRICKY + EXTRA, *(fixture.text + EXTRA for fixture in fixtures())]
    text = texts[seed % len(texts)]
    workspace = Workspace()
    editor = Editor(text, rng)
    for _ in range(20):
        module = workspace.module("/virtual/m.py", editor.text)
        assert module.module_scope is not None and module.call_index is not None
        whole = ModuleInfo("/virtual/m.py", None, SegmentParser().parse(editor.text))
        assert _scope(module.scope, module) == _scope(whole.scope, whole)
        editor.step()
