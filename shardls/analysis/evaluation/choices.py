"""Values with several options (`Choice`): an `if`/`else` whose test is not decided gives both
branches, and an operation on a choice is done on each option."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from shardls.analysis.evaluation.frame import Frame
from shardls.analysis.evaluation.known_values import decided
from shardls.analysis.values import Choice, Guard, Value, consistent, guarded_options

if TYPE_CHECKING:
    from shardls.analysis.evaluation.frame import ExpressionHandlers
    from shardls.analysis.evaluator import Evaluator


def _eval_IfExp(evaluator: Evaluator, node: ast.IfExp, frame: Frame) -> Value:
    truth = decided(evaluator.eval(node.test, frame))
    if truth is True:
        return evaluator.eval(node.body, frame)
    if truth is False:
        return evaluator.eval(node.orelse, frame)
    return evaluator.choice([evaluator.eval(node.body, frame), evaluator.eval(node.orelse, frame)])


def choice(evaluator: Evaluator, values: list[Value], guards: Sequence[frozenset[Guard]] = ()) -> Value:
    """The distinct options of `values`, the first `Limits.choices` of them (no later option
    can change those, so the search stops there: a loop over 10,000 items is not compared
    item by item with every other). `guards` (one per value) are the `if` branches each value
    comes through; an option reached through several keeps only the branches they share."""
    flat: list[Value] = []
    kept: list[frozenset[Guard]] = []
    for index, value in enumerate(values):
        outer = guards[index] if guards else frozenset()
        for option, inner in guarded_options(value):
            guard = outer | inner
            if not consistent(guard):
                continue
            if option in flat:
                position = flat.index(option)
                kept[position] = kept[position] & guard
                continue
            flat.append(option)
            kept.append(guard)
            if len(flat) == evaluator.limits.choices:
                return _choice(flat, kept)
    if not flat:  # no run takes these branches together: the values stand as they are
        return choice(evaluator, values) if guards else Choice(tuple(values))
    return flat[0] if len(flat) == 1 else _choice(flat, kept)


def _choice(flat: list[Value], guards: list[frozenset[Guard]]) -> Choice:
    return Choice(tuple(flat), tuple(guards) if any(guards) else ())


def map_options(evaluator: Evaluator, value: Value, function: Callable[[Value], Value]) -> Value:
    """`function` of `value`, or of each of its options (their choice) when it has several, each
    result keeping the branches its option comes through."""
    if isinstance(value, Choice):
        with evaluator.branches():
            guarded = list(guarded_options(value))
            return evaluator.choice([function(option) for option, _ in guarded], [g for _, g in guarded])
    return function(value)


@contextlib.contextmanager
def branches(evaluator: Evaluator) -> Iterator[None]:
    """Evaluating each option of a value in turn (see `branching`)."""
    evaluator.branching += 1
    try:
        yield
    finally:
        evaluator.branching -= 1


EXPRESSIONS: ExpressionHandlers = {
    ast.IfExp: _eval_IfExp,
}
"""The expressions this module evaluates (`Evaluator.eval` dispatches on the node's type)."""
