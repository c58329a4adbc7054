"""A placement helper of another module is short (`MAX_HELPER_STATEMENTS`): its statements are
counted only as far as that bound, so a model's long `forward` is not walked node by node just
to learn it is no helper (`walking/helper_imports.py`)."""

from __future__ import annotations

import ast
from pathlib import Path

from shardls.analysis.walking.helper_imports import (
    MAX_HELPER_STATEMENTS,
    PLACEMENTS,
    _assignments,
    _is_helper,
    _statements,
)


def _function(statements: int) -> ast.FunctionDef:
    body = "\n".join(f"    y{i} = x + {i}" for i in range(statements - 1))
    text = f"def put(x):\n{body}\n    return jax.device_put(x, sharding)\n"
    function = ast.parse(text).body[0]
    assert isinstance(function, ast.FunctionDef)
    return function


def test_a_long_function_is_counted_only_past_the_bound() -> None:
    assert _statements(_function(2000)) == MAX_HELPER_STATEMENTS + 1
    assert not _is_helper(_function(2000), PLACEMENTS)


def test_a_helper_as_long_as_the_bound_is_counted_exactly() -> None:
    assert _statements(_function(MAX_HELPER_STATEMENTS)) == MAX_HELPER_STATEMENTS
    assert _is_helper(_function(MAX_HELPER_STATEMENTS), PLACEMENTS)
    assert not _is_helper(_function(MAX_HELPER_STATEMENTS + 1), PLACEMENTS)


NESTED_LAMBDAS = """\
def forward(x, cfg):
    shard = lambda y: jax.device_put(y, cfg.sharding)
    try:
        put = lambda y: jax.device_put(y, s)
    except ValueError:
        put = lambda y, s=None: jax.lax.with_sharding_constraint(y, s)
    finally:
        f = [lambda: (z := 1) for _ in x]
    with mesh:
        match cfg.kind:
            case "a":
                class Inner:
                    g = lambda self, y: y
    return shard(put(x)), (lambda: [h := 2])()
"""


def test_the_assignments_of_a_statement_are_found_without_walking_its_expressions() -> None:
    """`placing_lambdas` looks for `name = lambda ...` at any depth of a segment: every
    assignment `ast.walk` meets, found by walking statements only (expressions hold none),
    in the nested blocks above and in every statement of shardls' own sources."""
    root = Path(__file__).resolve().parents[2]
    statements = [
        stmt
        for text in [NESTED_LAMBDAS, *(path.read_text() for path in sorted((root / "shardls").rglob("*.py")))]
        for stmt in ast.parse(text).body
    ]
    for stmt in statements:
        expected = [node for node in ast.walk(stmt) if isinstance(node, ast.Assign)]
        assert sorted(map(id, _assignments(stmt))) == sorted(map(id, expected))
    assert len(list(_assignments(ast.parse(NESTED_LAMBDAS).body[0]))) == 5  # no walrus is one
