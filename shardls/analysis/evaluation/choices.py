"""Values with several options (`Choice`): an `if`/`else` whose test is not decided gives both
branches, and an operation on a choice is done on each option."""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from shardls.analysis.evaluation.frame import Frame
from shardls.analysis.evaluation.known_values import truthiness
from shardls.analysis.values import Choice, Value, options

if TYPE_CHECKING:
    from shardls.analysis.evaluation.frame import ExpressionHandlers
    from shardls.analysis.evaluator import Evaluator


def _eval_IfExp(evaluator: Evaluator, node: ast.IfExp, frame: Frame) -> Value:
    truth = truthiness(evaluator.eval(node.test, frame))
    if truth is True:
        return evaluator.eval(node.body, frame)
    if truth is False:
        return evaluator.eval(node.orelse, frame)
    return evaluator.choice([evaluator.eval(node.body, frame), evaluator.eval(node.orelse, frame)])


def choice(evaluator: Evaluator, values: list[Value]) -> Value:
    """The distinct options of `values`, the first `Limits.choices` of them (no later option
    can change those, so the search stops there: a loop over 10,000 items is not compared
    item by item with every other)."""
    flat: list[Value] = []
    for value in values:
        for option in options(value):
            if option not in flat:
                flat.append(option)
                if len(flat) == evaluator.limits.choices:
                    return Choice(tuple(flat))
    if len(flat) == 1:
        return flat[0]
    return Choice(tuple(flat))


def map_options(evaluator: Evaluator, value: Value, function: Callable[[Value], Value]) -> Value:
    """`function` of `value`, or of each of its options (their choice) when it has several."""
    if isinstance(value, Choice):
        with evaluator.branches():
            return evaluator.choice([function(option) for option in value.options])
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
