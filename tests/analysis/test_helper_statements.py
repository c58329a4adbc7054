"""A placement helper of another module is short (`MAX_HELPER_STATEMENTS`): its statements are
counted only as far as that bound, so a model's long `forward` is not walked node by node just
to learn it is no helper (`walking/helper_imports.py`)."""

from __future__ import annotations

import ast

from shardls.analysis.walking.helper_imports import MAX_HELPER_STATEMENTS, PLACEMENTS, _is_helper, _statements


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
