"""Branches on the device count (issue #12): code that adapts to the machine
(`if len(jax.devices()) == 1: mesh_shape = (1, 1)`) states, inside the branch, how many devices
there are. A test that rests on the default device count decides nothing (`known_values.decided`),
but a value that comes through a branch whose test is an equality on the count is evaluated with
that count, known from the code there, instead of the assumed default it never runs with."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from shardls.analysis.evaluation.frame import Frame
from shardls.analysis.values import Const, Guard, Origin, Value

if TYPE_CHECKING:
    from shardls.analysis.evaluator import Evaluator
    from shardls.analysis.library import Library


def note_branch(evaluator: Evaluator, statement: ast.If, branch: bool, test: Value, frame: Frame) -> None:
    """Remember the device count the `branch` of `statement` states, when its test (`test`, its
    value) compares the device count itself with a number: `n == 1` in its body, `n != 1` in its
    else branch. Kept with the evaluator's memos, which the tests are decided with."""
    count = _stated_count(evaluator, statement.test, branch, test, frame)
    if count is not None:
        evaluator.memos.stated_counts[(id(statement), branch)] = (count, statement.lineno)


def _stated_count(
    evaluator: Evaluator, node: ast.expr, branch: bool, test: Value, frame: Frame
) -> int | None:
    library = _library(evaluator)
    if library is None or not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return None
    equal = isinstance(node.ops[0], ast.Eq)
    if not (equal or isinstance(node.ops[0], ast.NotEq)) or equal is not branch:
        return None
    origin, count = test.origin, library.environment.device_count
    if origin is None or origin.assumption is None or count.origin is None:
        return None
    if origin.assumption != count.origin.assumption:
        return None  # the test rests on another assumption (a flag's default)
    left, right = evaluator.eval(node.left, frame), evaluator.eval(node.comparators[0], frame)
    other = right if left is count else left if right is count else None
    if not isinstance(other, Const) or type(other.value) is not int or other.value < 1:
        return None
    return None if other.origin is not None and other.origin.assumption is not None else other.value


def stated_count(evaluator: Evaluator, guard: frozenset[Guard]) -> tuple[int, int] | None:
    """The device count (and the line of the test stating it) the branches of `guard` state,
    when they state one; None when none does, or two state different counts (no run)."""
    stated = [found for g in guard if (found := evaluator.memos.stated_counts.get(g)) is not None]
    if not stated or len({count for count, _ in stated}) != 1:
        return None
    return min(stated)


@contextlib.contextmanager
def devices_stated(evaluator: Evaluator, guard: frozenset[Guard]) -> Iterator[None]:
    """The library models JAX with the device count `guard`'s branches state while a call of
    the values that come through them is evaluated (`jax.make_mesh(mesh_shape, ...)`)."""
    library, stated = _library(evaluator), stated_count(evaluator, guard)
    if library is None or stated is None:
        yield
        return
    count, line = stated
    before = library.environment
    origin = Origin(f"the test at line {line}")
    library.environment = replace(before, device_count=Const(count, origin=origin), stated_in_branch=True)
    try:
        yield
    finally:
        library.environment = before


def _library(evaluator: Evaluator) -> Library | None:
    from shardls.analysis.library import Library

    return evaluator.library if isinstance(evaluator.library, Library) else None
