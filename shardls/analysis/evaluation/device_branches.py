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
from shardls.analysis.values import Const, Guard, Origin, Seq, SetV, Value

if TYPE_CHECKING:
    from shardls.analysis.evaluator import Evaluator
    from shardls.analysis.library import Environment, Library


def note_branch(evaluator: Evaluator, statement: ast.If, branch: bool, test: Value, frame: Frame) -> None:
    """Remember what the `branch` of `statement` says of the device count when its test (`test`,
    its value) rests on the default count, or is not known: the few counts it leaves, when the
    test compares the count itself with numbers (`n == 1` in its body, `n != 1` in its else
    branch, the code after `if n != 4 or jax.process_count() != 1: skipTest(...)`); None when it
    leaves no small set of counts but the default count contradicts it. Kept with the
    evaluator's memos, which decide the tests."""
    truth = truthiness(test)
    if decided(test) is not None:
        return  # a test decided from the code or the user's settings
    if truth is None and not _compares_with_numbers(statement.test):
        return  # nothing to say of the count, read from the syntax before anything is evaluated
    counts = _counts(evaluator, statement.test, branch, frame)
    if counts is not None and len(counts) > MAX_COUNTS:
        counts = None
    if counts is not None or (truth is not None and truth is not branch):
        evaluator.memos.stated_counts[(id(statement), branch)] = (counts, frame.line_of(statement) + 1)


MAX_COUNTS = 4
"""The most counts a branch may leave for the walker to run its code once per count (`n not in
(4, 8)`, `n > 2 or ...` in the `else`); a branch that leaves more states nothing."""

_MOST = 64
"""The largest count a range of counts is spelled out to (`n < 16`), before `MAX_COUNTS` cuts it."""


def _compares_with_numbers(node: ast.expr) -> bool:
    """Whether a test holds a comparison with a number or a tuple of numbers written out (`n !=
    4`, `n not in (4, 8)`): only such a test can leave a few counts where its value is not
    known, and most tests of a walk are not known (`if fsdp:`), so this spares evaluating them."""
    if isinstance(node, ast.UnaryOp):
        return _compares_with_numbers(node.operand)
    if isinstance(node, ast.BoolOp):
        return any(_compares_with_numbers(value) for value in node.values)
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return False
    sides = (node.left, node.comparators[0])
    return any(
        _is_number(side)
        or (isinstance(side, (ast.Tuple, ast.List, ast.Set)) and all(map(_is_number, side.elts)))
        for side in sides
    )


def _is_number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _counts(evaluator: Evaluator, node: ast.expr, branch: bool, frame: Frame) -> frozenset[int] | None:
    """The counts the `branch` of a test leaves the device count itself (`jax.device_count()`,
    `len(jax.devices())`, a name bound to one), from its comparisons with numbers the code states
    (`n == 4`; `n < 2`; `n in (4, 8)`), through `not`, `and` and `or`: every part of an `and`
    holds in its body, and of an `or` every part fails in its `else` (after `if n != 4 or
    jax.process_count() != 1: self.skipTest(...)`, 4). None: any count (a part on something
    else says nothing of it), or one of a range without end (`n > 2`)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _counts(evaluator, node.operand, not branch, frame)
    if isinstance(node, ast.BoolOp):
        each = [_counts(evaluator, value, branch, frame) for value in node.values]
        if isinstance(node.op, ast.And) is branch:  # every part holds (fails, for an `or`)
            known = [c for c in each if c is not None]
            return frozenset.intersection(*known) if known else None
        if any(c is None for c in each):  # some part holds: any of their counts
            return None
        return frozenset().union(*(c for c in each if c is not None))
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        return _compared(evaluator, node, branch, frame)
    return None


def _compared(evaluator: Evaluator, node: ast.Compare, branch: bool, frame: Frame) -> frozenset[int] | None:
    """The counts one comparison of the count with numbers leaves (`n <= 2`, `4 == n`, `n in (4, 8)`)."""
    library = _library(evaluator)
    if library is None:
        return None
    count = library.environment.device_count
    left, right = evaluator.eval(node.left, frame), evaluator.eval(node.comparators[0], frame)
    op = type(node.ops[0])
    if op in (ast.In, ast.NotIn):
        numbers = _stated_numbers(right) if left is count else None
        if numbers is None or (op is ast.In) is not branch:
            return None
        return frozenset(numbers)
    other = right if left is count else left if right is count else None
    numbers = _stated_numbers(other) if isinstance(other, Const) else None  # one number, not `(4, 8)`
    if not numbers:
        return None
    if left is not count:  # `4 == n`, `1 < n`: the count on the right
        op = _MIRRORED.get(op, op)
    if not branch:
        op = _NEGATED.get(op, op)
    k = numbers[0]
    only = {
        ast.Eq: range(k, k + 1),
        ast.LtE: range(1, min(k, _MOST) + 1),
        ast.Lt: range(1, min(k - 1, _MOST) + 1),
    }
    found = only.get(op)
    return None if found is None or (k > _MOST and op is not ast.Eq) else frozenset(found)


def _stated_numbers(value: Value | None) -> list[int] | None:
    """The positive numbers a value written in the code holds (`4`, `(4, 8)`), none from an
    assumption; None when it holds anything else."""
    items = value.items if isinstance(value, (Seq, SetV)) else (value,)
    numbers = []
    for item in items:
        if not isinstance(item, Const) or type(item.value) is not int or item.value < 1:
            return None
        if item.origin is not None and item.origin.assumption is not None:
            return None
        numbers.append(item.value)
    return numbers


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


def devices_stated(
    evaluator: Evaluator, guard: frozenset[Guard], count: int | None = None
) -> contextlib.AbstractContextManager[None]:
    """The library models JAX with what `guard`'s branches say of the device count while a call
    of the values that come through them is evaluated (`jax.make_mesh(mesh_shape, ...)`), or
    while the code written in those branches is (the walker's `Context.branches`, with the one
    of several counts they leave that the walk runs with, `count`). The names read meanwhile are
    memoised apart (`BindingMemos.under`).

    Entered for every statement walked and every call recognized, where almost always no branch
    on the device count is around (`guard` empty, or no test stating a count): then nothing is
    done, without making the generator of `_stated`."""
    if not guard or not evaluator.memos.stated_counts:
        return _NOTHING
    return _stated(evaluator, guard, count)


_NOTHING = contextlib.nullcontext()


@contextlib.contextmanager
def _stated(evaluator: Evaluator, guard: frozenset[Guard], count: int | None) -> Iterator[None]:
    library = _library(evaluator)
    said = [found for g in guard if (found := evaluator.memos.stated_counts.get(g)) is not None]
    if library is None or not said:
        yield
        return
    before, memos = library.environment, evaluator.memos
    library.environment = _narrowed(before, said, count)
    evaluator.memos = memos.under(library.environment)
    try:
        yield
    finally:
        library.environment, evaluator.memos = before, memos


def _narrowed(
    environment: Environment, said: list[tuple[frozenset[int] | None, int]], count: int | None
) -> Environment:
    """The counts every branch leaves (the branches of an `elif` chain, a guard and the `if`
    after it): one, or the one of them the walk runs with (`count`), is that count, known from
    the tests that state it. Several, the default among them and no branch contradicting it:
    the default, assumed as anywhere else. Otherwise (none left, or only branches the default
    contradicts) the branches run elsewhere."""
    finite = [(counts, line) for counts, line in said if counts is not None]
    left = frozenset.intersection(*(counts for counts, _ in finite)) if finite else frozenset()
    lines = ", ".join(str(line) for line in sorted({line for _, line in finite}))
    if count is not None and count in left and len(left) > 1:
        # One of several: true of some machine the code runs on, not known to be this one's.
        options = ", ".join(str(c) for c in sorted(left))
        assumed = f"{count} devices (one of {options}, which the test at line {lines} leaves)"
        origin = Origin(f"the test at line {lines}", assumption=assumed)
        return replace(environment, device_count=Const(count, origin=origin), stated_in_branch=True)
    if len(left) == 1:
        (only,) = left
        origin = Origin(f"the test at line {lines}")
        return replace(environment, device_count=Const(only, origin=origin), stated_in_branch=True)
    if environment.device_count.value in left and len(finite) == len(said):
        return environment
    return replace(environment, runs_elsewhere=True)


def counts_left(evaluator: Evaluator, guard: frozenset[Guard]) -> tuple[int, ...]:
    """The counts `guard`'s branches leave together, when there are several: the walker runs
    the code written there once per count (`Context.count`); none when they leave one count,
    or no small set of them."""
    said = [found[0] for g in guard if (found := evaluator.memos.stated_counts.get(g)) is not None]
    finite = [counts for counts in said if counts is not None]
    left = frozenset.intersection(*finite) if finite and len(finite) == len(said) else frozenset()
    return tuple(sorted(left)) if len(left) > 1 else ()


def _library(evaluator: Evaluator) -> Library | None:
    from shardls.analysis.library import Library

    return evaluator.library if isinstance(evaluator.library, Library) else None
