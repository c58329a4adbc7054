"""`jax.lax.cond` and `jax.lax.switch`: the value of a branch function called with the operands.

JAX traces every branch and raises unless they all return the same types (shapes and dtypes), so
the result is what any branch returns: one branch known is enough (gemma4's and gpt_oss's
`sample_top` returns `lax.cond(temp > 1e-3, sample_multinomial, partial(jnp.argmax, axis=-1),
logits)`, whose first branch divides by a temperature of unknown rank but whose second keeps the
logits' rank). Branches whose value is not known, or whose array's rank is not, are left out
when another's is; when several are known, their choice (each is what JAX would give, if it does
not raise). The branch bodies' own sites, with the operands bound to
their parameters, are `recognizers/cond_branches.py`'s.
"""

from __future__ import annotations

from shardls.analysis.library import CallArgs
from shardls.analysis.library.registry import calls
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
    arguments = operands(call.qualname, call.args, call.kwargs)
    functions = branch_functions(call.qualname, call.args, call.kwargs)
    if arguments is None or not functions:
        return None
    results = [call.evaluator.call(f, list(arguments), {}, None, call.frame) for f in functions]
    known = [option for result in results for option in options(result) if not isinstance(option, Unknown)]
    ranked = [option for option in known if not (isinstance(option, ArrayV) and option.shape is None)]
    if not known:
        return None
    return call.evaluator.choice(ranked or known)
