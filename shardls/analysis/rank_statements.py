"""Statements after which a name's rank is fixed: `b, s = x.shape`, `assert x.ndim == 3`.

Python raises unless the value has that rank, so below such a statement the rank is known. The
scope builder binds the name again there, and the evaluation reads the rank back from it.
"""

from __future__ import annotations

import ast


def rank_fixed_names(stmt: ast.stmt) -> tuple[str, ...]:
    """The names whose rank the statement fixes: `a, b = name.shape` (also inside a tuple
    unpacking, `(b, s, d), e = x.shape, n`), `assert name.ndim == N` or `assert len(name.shape)
    == N`, or several of these joined by `and` (`assert x.ndim == 4 and sin.ndim == 3`: below it
    each holds)."""
    if isinstance(stmt, ast.Assign):
        return tuple(unpacked_shapes(stmt))
    if isinstance(stmt, ast.Assert):
        return tuple(asserted_ranks(stmt.test))
    return ()


def unpacked_shapes(stmt: ast.Assign) -> dict[str, tuple[str | None, ...]]:
    """For each name whose whole shape the assignment unpacks, the names its sizes go to (None
    for `_` or a target that is not a name): `b, s = x.shape`, and the same nested in the
    unpacking of a tuple written out, `(b, s, d), e = x.shape, n` or `(n, k), (g, _, m) =
    lhs.shape, rhs.shape` (Python raises unless each shape has as many sizes as its targets).
    Not a starred target, not a name the statement binds again, not a name unpacked twice
    with different ranks (such a statement always raises)."""
    if len(stmt.targets) != 1:
        return {}
    found: dict[str, tuple[str | None, ...]] = {}
    clashing: set[str] = set()
    for name, names in _unpackings(stmt.targets[0], stmt.value):
        if len(found.setdefault(name, names)) != len(names):
            clashing.add(name)
    rebound = {node.id for node in ast.walk(stmt.targets[0]) if isinstance(node, ast.Name)}
    return {name: names for name, names in found.items() if name not in clashing | rebound}


def _unpackings(target: ast.expr, value: ast.expr) -> list[tuple[str, tuple[str | None, ...]]]:
    if not isinstance(target, ast.Tuple | ast.List) or any(isinstance(e, ast.Starred) for e in target.elts):
        return []
    if isinstance(value, ast.Attribute) and value.attr == "shape" and isinstance(value.value, ast.Name):
        names = tuple(e.id if isinstance(e, ast.Name) and e.id != "_" else None for e in target.elts)
        return [(value.value.id, names)]
    if (
        not isinstance(value, ast.Tuple | ast.List)
        or len(value.elts) != len(target.elts)
        or any(isinstance(e, ast.Starred) for e in value.elts)
    ):
        return []
    return [found for inner, part in zip(target.elts, value.elts) for found in _unpackings(inner, part)]


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
