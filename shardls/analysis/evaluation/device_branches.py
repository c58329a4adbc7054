"""Branches on the device count (issue #12): code that adapts to the machine
(`if len(jax.devices()) == 1: mesh_shape = (1, 1)`) states, inside the branch, how many devices
there are. A test that rests on the default device count decides nothing (`known_values.decided`),
but a value that comes through a branch whose test is an equality on the count is evaluated with
that count, known from the code there, instead of the assumed default it never runs with; one
that comes through a branch the default count contradicts (`if jax.device_count() >= 16:` with 8
assumed) runs only on other machines, so what rests on the count is not reported for it."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from shardls.analysis.evaluation.frame import Frame
from shardls.analysis.evaluation.known_values import decided, truthiness
from shardls.analysis.values import Const, Guard, Origin, Value

if TYPE_CHECKING:
    from shardls.analysis.evaluator import Evaluator
    from shardls.analysis.library import Environment, Library


def note_branch(evaluator: Evaluator, statement: ast.If, branch: bool, test: Value, frame: Frame) -> None:
    """Remember what the `branch` of `statement` says of the device count when its test (`test`,
    its value) rests on the default count: the count, when the test compares the count itself
    with a number (`n == 1` in its body, `n != 1` in its else branch); None when it states none
    but the default count contradicts it. Kept with the evaluator's memos, which decide the tests."""
    truth = truthiness(test)
    if truth is None or decided(test) is not None:
        return  # a test decided from the code or the user's settings, or not known at all
    count = _stated_count(evaluator, statement.test, branch, frame)
    if count is not None or truth is not branch:
        evaluator.memos.stated_counts[(id(statement), branch)] = (count, statement.lineno)


def _stated_count(evaluator: Evaluator, node: ast.expr, branch: bool, frame: Frame) -> int | None:
    """The one count the branch leaves the device count itself (`jax.device_count()`,
    `len(jax.devices())`, a name bound to one) compared with a number: the number where they are
    equal (`n == 4`, the `else` of `n != 4`), 1 where the count is at most 1 (`n < 2`, the code
    after `if n > 1: skipTest(...)`); none from an assumption."""
    library = _library(evaluator)
    if library is None or not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return None
    count = library.environment.device_count
    left, right = evaluator.eval(node.left, frame), evaluator.eval(node.comparators[0], frame)
    other = right if left is count else left if right is count else None
    if not isinstance(other, Const) or type(other.value) is not int or other.value < 1:
        return None
    if other.origin is not None and other.origin.assumption is not None:
        return None
    op = type(node.ops[0])
    if left is not count:  # `4 == n`, `1 < n`: the count on the right
        op = _MIRRORED.get(op, op)
    if not branch:
        op = _NEGATED.get(op, op)
    k = other.value
    only = {ast.Eq: k, ast.LtE: 1 if k == 1 else None, ast.Lt: 1 if k == 2 else None}
    return only.get(op)


_MIRRORED: dict[type, type] = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE}
"""`k < n` is `n > k`."""
_NEGATED: dict[type, type] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
}
"""The comparison that holds in the `else` branch."""


@contextlib.contextmanager
def devices_stated(evaluator: Evaluator, guard: frozenset[Guard]) -> Iterator[None]:
    """The library models JAX with what `guard`'s branches say of the device count while a call
    of the values that come through them is evaluated (`jax.make_mesh(mesh_shape, ...)`), or
    while the code written in those branches is (the walker's `Context.branches`). The names
    read meanwhile are memoised apart (`BindingMemos.under`)."""
    library = _library(evaluator)
    said = [found for g in guard if (found := evaluator.memos.stated_counts.get(g)) is not None]
    if library is None or not said:
        yield
        return
    before, memos = library.environment, evaluator.memos
    library.environment = _narrowed(before, said)
    evaluator.memos = memos.under(library.environment)
    try:
        yield
    finally:
        library.environment, evaluator.memos = before, memos


def _narrowed(environment: Environment, said: list[tuple[int | None, int]]) -> Environment:
    """One count stated (the branches of an `elif` chain agree with it): that count, known from
    the test that states it. None stated, or two that differ: the branches run elsewhere."""
    stated = sorted((count, line) for count, line in said if count is not None)
    if not stated or len({count for count, _ in stated}) != 1:
        return replace(environment, runs_elsewhere=True)
    count, line = stated[0]
    origin = Origin(f"the test at line {line}")
    return replace(environment, device_count=Const(count, origin=origin), stated_in_branch=True)


def _library(evaluator: Evaluator) -> Library | None:
    from shardls.analysis.library import Library

    return evaluator.library if isinstance(evaluator.library, Library) else None
