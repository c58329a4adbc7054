"""`jax.lax.cond` and `jax.lax.switch`: the value of a branch function called with the operands.

JAX traces every branch and raises unless they all return the same types (shapes and dtypes), so
the result is what any branch returns: one branch known is enough (gemma4's and gpt_oss's
`sample_top` returns `lax.cond(temp > 1e-3, sample_multinomial, partial(jnp.argmax, axis=-1),
logits)`, whose first branch divides by a temperature of unknown rank but whose second keeps the
logits' rank). The branches are tried in turn until one's value has a known rank, a lambda that
returns its operands first (nothing to evaluate); when none has, the choice of their known values. The branch bodies' own sites, with the operands bound to
their parameters, are `recognizers/cond_branches.py`'s.
"""

from __future__ import annotations

import ast

from shardls.analysis.library import CallArgs
from shardls.analysis.library.registry import calls
from shardls.analysis.reuse import frame_key, reuse_of
from shardls.analysis.values import ArrayV, Seq, Unknown, Value, options

COND = "jax.lax.cond"
SWITCH = "jax.lax.switch"
OPERANDS_FROM = {COND: 3, SWITCH: 2}
"""The position of a call's first operand (the arguments the branch functions are called with)."""


def branch_functions(qualname: str, args: list[Value], kwargs: dict[str, Value]) -> list[Value]:
    """The functions a `cond` or `switch` call may run: `true_fun` and `false_fun`, or the items of
    `branches` (nothing when that sequence is not known)."""
    if qualname == COND:
        named = (_argument(args, kwargs, 1, "true_fun"), _argument(args, kwargs, 2, "false_fun"))
        return [f for f in named if f is not None]
    branches = _argument(args, kwargs, 1, "branches")
    return list(branches.items) if isinstance(branches, Seq) else []


def operands(qualname: str, args: list[Value], kwargs: dict[str, Value]) -> list[Value] | None:
    """The operands a branch is called with (None when a keyword the branches do not take, or an
    old-style `operand=` beside positional operands, leaves them unclear)."""
    if kwargs.keys() - {"operand", *_PARAMETERS}:
        return None
    given = args[OPERANDS_FROM[qualname] :]
    if "operand" in kwargs:
        return None if given else [kwargs["operand"]]
    return given


_PARAMETERS = ("pred", "true_fun", "false_fun", "index", "branches")


def _argument(args: list[Value], kwargs: dict[str, Value], index: int, name: str) -> Value | None:
    return kwargs.get(name, args[index] if index < len(args) else None)


@calls(COND, SWITCH)
def _branched(call: CallArgs) -> Value | None:
    """Once per call and frame (`Reuse.answer_anywhere`, as `wrapped._wrapper_arguments`): a
    name assigned from the call is looked up by every later statement that reads it (nemotron3's
    `x, segment_ids = jax.lax.cond(..., shift_right, ...)` was evaluated 523 times)."""
    frame, evaluator = call.frame, call.evaluator
    key = (
        "branched",
        id(call.node),
        frame_key(frame),
        id(frame.enclosing),
        evaluator.branching,
        id(evaluator.memos),
    )
    return reuse_of(evaluator).answer_anywhere(
        key, frame.call_depth, (call.node, frame), lambda: _value(call)
    )


def _value(call: CallArgs) -> Value | None:
    """The first branch's value whose rank is known, trying first a branch that returns its
    operands as they are (`lambda x: x`, `lambda *args: args`: nothing to evaluate), else the
    choice of the branches' known values."""
    arguments = operands(call.qualname, call.args, call.kwargs)
    functions = branch_functions(call.qualname, call.args, call.kwargs)
    if arguments is None or not functions:
        return None
    identity = next((v for n in _branch_nodes(call) if (v := _identity(n, arguments)) is not None), None)
    if identity is not None:
        return identity
    known: list[Value] = []
    for function in functions:
        result = call.evaluator.call(function, list(arguments), {}, None, call.frame)
        found = [option for option in options(result) if not isinstance(option, Unknown)]
        ranked = [option for option in found if not (isinstance(option, ArrayV) and option.shape is None)]
        if ranked:
            return call.evaluator.choice(ranked)
        known.extend(found)
    return call.evaluator.choice(known) if known else None


def _branch_nodes(call: CallArgs) -> list[ast.expr]:
    if call.qualname == COND:
        return [n for n in (call.arg_node(1, "true_fun"), call.arg_node(2, "false_fun")) if n is not None]
    branches = call.arg_node(1, "branches")
    return list(branches.elts) if isinstance(branches, ast.List | ast.Tuple) else []


def _identity(node: ast.expr, arguments: list[Value]) -> Value | None:
    """What a lambda that returns its operands unchanged returns (None for any other branch)."""
    if not isinstance(node, ast.Lambda) or not isinstance(node.body, ast.Name):
        return None
    parameters = node.args
    if parameters.posonlyargs or parameters.kwonlyargs or parameters.kwarg or parameters.defaults:
        return None
    if parameters.vararg is not None and not parameters.args and node.body.id == parameters.vararg.arg:
        return Seq(tuple(arguments))
    names = [a.arg for a in parameters.args]
    if parameters.vararg is None and names == [node.body.id] and len(arguments) == 1:
        return arguments[0]
    return None
