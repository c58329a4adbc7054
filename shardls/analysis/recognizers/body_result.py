"""What a function wrapped by `jax.jit` / `jax.shard_map` returns at one call, for pairing with its
out_shardings / out_specs (`recognizers/jit.py`, `shard_map.py`).

The body is evaluated, never run, with its parameters bound as the call passes them. Several
`return`s must agree, or nothing is known of the result: a model's `forward` ending in
`return logits, new_cache` on one branch and `return logits, all_cache_updates` on the other
gives an unknown result, yet evaluating `logits` in both took most of a check of
jax-llm-examples' nemotron3 (15,000 steps at each of its two `jit` calls). So returns written as
tuples of one length are compared first on the items they write differently, and the first
difference decides, where no array can have a sharded type (the typing pass is inactive: nothing
skipped could have recorded an operation, `sharded/events.py`). An unknown result pairs every
sharding with no array, whatever its reason, so the layouts are those of the full evaluation.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from shardls.analysis.evaluation.calls import callee_frame
from shardls.analysis.evaluation.ordered import in_order, run_in_order
from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.sharded.propagate import may_type
from shardls.analysis.values import Const, FunctionV, Unknown, Value

if TYPE_CHECKING:
    from collections.abc import Mapping

    from shardls.analysis.recognizers.wrapped import Application

Returned = list[tuple[ast.expr, Frame]]
"""Each `return`'s expression, with the frame it is evaluated in."""


def body_result(evaluator: Evaluator, app: Application, locals_: Mapping[str, Value]) -> Value:
    """What the wrapped function returns with its parameters bound (evaluated, never run; a body
    whose value depends on the order of its statements is run in order, as a call runs it)."""
    function = app.function
    if isinstance(function, FunctionV):
        info = function.func
        depth = app.visit.frame.call_depth + 1
        if in_order(info.node):
            ordered = _run(evaluator, function, locals_, app.visit.frame)
            if ordered is not None:
                return ordered
        returned = [
            (
                ret.value,
                Frame(
                    info.module,
                    info.scope,
                    info.segment,
                    info.scope.order_of.get(id(ret)),
                    locals_,
                    depth,
                    runs_at=app.visit.frame.callee_runs_at(),
                ),
            )
            for ret in info.returns
            if ret.value is not None
        ]
        if _differ_early(evaluator, returned):
            return _different(info.name)
        results = [evaluator.evaluate(node, frame) for node, frame in returned]
        if results and all(result == results[0] for result in results):
            return results[0]
        return _different(info.name)
    lambda_node = app.lambda_node
    if lambda_node is not None:
        frame = app.visit.frame
        return evaluator.evaluate(lambda_node.body, replace(frame, locals={**frame.locals, **locals_}))
    return Unknown("the wrapped function is not visible")


def _run(
    evaluator: Evaluator, function: FunctionV, locals_: Mapping[str, Value], frame: Frame
) -> Value | None:
    """The body run in order, as a call of the function runs it (`evaluation/ordered.py`): a
    result built in a loop (`layers.append(gen_layer(key))` for each layer, then
    `tuple(layers)`, maxtext's `examples/shardings.py`) is unknown to the lazy reading. None
    when the body has a statement that is not run in order."""
    info = function.func
    called = callee_frame(function, locals_, frame)
    ran: list[Value | None] = []

    def run() -> Value:
        ran.append(run_in_order(evaluator, info, called))
        return Const(None)

    answered = evaluator.answer(run)
    return ran[0] if ran and isinstance(answered, Const) else None  # an Unknown: the budget ran out


def _different(name: str) -> Unknown:
    return Unknown(f"{name}() returns different values")


def _differ_early(evaluator: Evaluator, returned: Returned) -> bool:
    """Whether returns written as tuples of one length differ in an item they write differently
    (each item a question of its own, in its return's frame), when no evaluation here can record a
    typed operation. False says nothing: the returns are then evaluated whole, as without it."""
    if len(returned) < 2 or may_type(evaluator):
        return False
    tuples = [node for node, _ in returned if isinstance(node, ast.Tuple)]
    if len(tuples) != len(returned) or len({len(node.elts) for node in tuples}) != 1:
        return False
    if any(isinstance(item, ast.Starred) for node in tuples for item in node.elts):
        return False
    for index in range(len(tuples[0].elts)):
        if len({ast.dump(node.elts[index]) for node in tuples}) == 1:
            continue  # written the same: the same value unless a name is bound in between
        values = [evaluator.evaluate(node.elts[index], frame) for node, (_, frame) in zip(tuples, returned)]
        if any(value != values[0] for value in values):
            return True
    return False
