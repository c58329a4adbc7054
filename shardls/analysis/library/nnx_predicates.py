"""Flax NNX filters written as functions of a variable's path and the variable
(`lambda path, x: 'kernel' in path`, `nnx.All(nnx.Param, lambda path, x: 'output' not in path)`,
a `def` taking both): Flax's `filterlib.to_predicate` calls them as they are. A function (a
`def`, or a lambda bound to a name: `lambda_defs.py`) is called; the evaluator reads any other
lambda as unknown, so that filter is taken from its source where it is given (the key of the
dict literal, the argument of `nnx.All`, or the call of a function that returns one), and its
body is evaluated for each variable, its parameters bound to the path (a tuple of the keys) and
the variable. A body that cannot be decided for a variable (it reads
the variable's value, a name not known here) selects it or not as nothing else would: unknown,
and the variables it could select get no sharding (`StateShardingV.for_variable`)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from shardls.analysis.evaluation.known_values import decided
from shardls.analysis.evaluator import Frame
from shardls.analysis.library import CallArgs
from shardls.analysis.library.nnx_variables import VariableV
from shardls.analysis.values import Const, FunctionV, Seq, Value


@dataclass(frozen=True, eq=False)
class PredicateV(Value):
    """A filter that is a function: what it answers for a path (as a tuple) and a variable."""

    answer: Callable[[Value, Value], Value]

    def selects(self, path: tuple[object, ...], variable: VariableV) -> bool | None:
        """Whether the function selects the variable at `path`; None when its answer is not known
        from the code (nor when a key of the path is)."""
        keys = tuple(Const(part) for part in path if isinstance(part, (str, int)))
        if len(keys) != len(path):
            return None
        return decided(self.answer(Seq(keys), variable))


def predicate(call: CallArgs, value: Value, node: ast.expr | None) -> Value:
    """The filter `value` (written as `node` in `call`) as a `PredicateV` when it is a function of
    two parameters; any other filter as it is."""
    evaluator = call.evaluator
    if isinstance(value, FunctionV):
        function, frame = value, call.frame
        return PredicateV(lambda path, x: evaluator.call(function, [path, x], {}, None, frame))
    found = _lambda_of(call, node)
    if found is None:
        return value
    written, where = found
    names = [a.arg for a in [*written.args.posonlyargs, *written.args.args]]
    if len(names) != 2 or written.args.vararg is not None:
        return value
    body = written.body

    def answer(path: Value, x: Value) -> Value:
        return evaluator.evaluate(body, where.with_locals({**where.locals, names[0]: path, names[1]: x}))

    return PredicateV(answer)


def _lambda_of(call: CallArgs, node: ast.expr | None) -> tuple[ast.Lambda, Frame] | None:
    """The lambda written as `node`, or returned by the function `node` calls (flax's
    `path_ends_with(('linear1', 'kernel'))`), with the frame its body reads names in."""
    if isinstance(node, ast.Lambda):
        return node, call.frame
    if isinstance(node, ast.Call):
        return _returned_lambda(call, node)
    return None


def _returned_lambda(call: CallArgs, node: ast.Call) -> tuple[ast.Lambda, Frame] | None:
    """The lambda a workspace function returns (its only `return`), in the frame of that call:
    the body reads the call's arguments (`path_suffix`)."""
    evaluator, frame = call.evaluator, call.frame
    function = evaluator.evaluate(node.func, frame)
    if not isinstance(function, FunctionV) or not evaluator.within_call_depth(frame):
        return None
    info = function.func
    returns = info.returns
    if len(returns) != 1 or not isinstance(returns[0].value, ast.Lambda):
        return None
    args, kwargs = evaluator.call_arguments(node, frame)
    locals_ = evaluator.bind_arguments(info, args, kwargs, function.bound, frame)
    called = Frame(
        info.module, info.scope, info.segment, None, locals_, frame.call_depth + 1, function.closure
    )
    return returns[0].value, called
