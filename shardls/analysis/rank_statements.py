"""Statements after which a name's rank is fixed: `b, s = x.shape`, `assert x.ndim == 3`.

Python raises unless the value has that rank, so below such a statement the rank is known. The
scope builder binds the name again there, and the evaluation reads the rank back from it.
"""

from __future__ import annotations

import ast


def rank_fixed_names(stmt: ast.stmt) -> tuple[str, ...]:
    """The names whose rank the statement fixes: `a, b = name.shape` (no starred target, `name`
    not among the targets), `assert name.ndim == N` or `assert len(name.shape) == N`, or several
    of these joined by `and` (`assert x.ndim == 4 and sin.ndim == 3`: below it each holds)."""
    if isinstance(stmt, ast.Assign):
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Tuple | ast.List):
            return ()
        elements = stmt.targets[0].elts
        value = stmt.value
        if not (
            isinstance(value, ast.Attribute) and value.attr == "shape" and isinstance(value.value, ast.Name)
        ):
            return ()
        name = value.value.id
        if any(isinstance(e, ast.Starred) or (isinstance(e, ast.Name) and e.id == name) for e in elements):
            return ()
        return (name,)
    if isinstance(stmt, ast.Assert):
        return tuple(asserted_ranks(stmt.test))
    return ()


def asserted_ranks(test: ast.expr) -> dict[str, int]:
    """The rank each name has where the test holds: `name.ndim == N` or `len(name.shape) == N`
    (N from 0 to 32), or an `and` of tests (every operand holds; the others, `starts.size == bs`,
    say nothing about a rank). A name given two ranks is left out: such a test never holds."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        found: dict[str, int] = {}
        clashing: set[str] = set()
        for operand in test.values:
            for name, rank in asserted_ranks(operand).items():
                if found.setdefault(name, rank) != rank:
                    clashing.add(name)
        return {name: rank for name, rank in found.items() if name not in clashing}
    compared, rank = _compared_rank(test)
    return {} if compared is None else {compared: rank}


def _compared_rank(test: ast.expr) -> tuple[str | None, int]:
    """`(name, N)` for a test `name.ndim == N` or `len(name.shape) == N` (N from 0 to 32);
    `(None, 0)` for any other test."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and isinstance(test.comparators[0], ast.Constant)
        and type(test.comparators[0].value) is int
        and 0 <= test.comparators[0].value <= 32
    ):
        return None, 0
    left = test.left
    if isinstance(left, ast.Attribute) and left.attr == "ndim" and isinstance(left.value, ast.Name):
        return left.value.id, test.comparators[0].value
    if (
        isinstance(left, ast.Call)
        and isinstance(left.func, ast.Name)
        and left.func.id == "len"
        and len(left.args) == 1
        and not left.keywords
        and isinstance(left.args[0], ast.Attribute)
        and left.args[0].attr == "shape"
        and isinstance(left.args[0].value, ast.Name)
    ):
        return left.args[0].value.id, test.comparators[0].value
    return None, 0
