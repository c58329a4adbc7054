"""How an operation finds its typing rule, and the readers of the arguments rules share.

Rules register themselves by qualified name (calls) or method name; an argument a rule depends on
that cannot be read is UNREADABLE, which means no type: never a guess.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from shardls.analysis.sharded.propagate import UNREADABLE, Unreadable, apply, typed
from shardls.analysis.values import Const, Seq, TypedArray, Value, as_int
from shardls.core.typing import ShardedType
from shardls.core.typing.fixes import JoinRule, OutRule

if TYPE_CHECKING:
    from shardls.analysis.library import CallArgs

JNP = "jax.numpy."

CallRule = Callable[["CallArgs", Value | None], Value | None]

_CALLS: dict[str, CallRule] = {}


def calls(*qualnames: str) -> Callable[[CallRule], CallRule]:
    def register(rule: CallRule) -> CallRule:
        for name in qualnames:
            _CALLS[name] = rule
        return rule

    return register


def has_call_rule(qualname: str) -> bool:
    return qualname in _CALLS


def typed_call(call: CallArgs, result: Value | None) -> Value | None:
    """The library's result of a call, with its type when the call has a rule and its operands'
    types are known."""
    rule = _CALLS.get(call.qualname)
    return result if rule is None else rule(call, result)


def apply_call(
    call: CallArgs,
    operands: list[TypedArray],
    rule: Callable[[], ShardedType],
    base: Value | None,
    *,
    refit: OutRule | None = None,
    realign: JoinRule | None = None,
) -> Value | None:
    name = call.qualname.rsplit(".", 1)[-1]
    return apply(
        call.evaluator, call.frame, call.node, name, operands, rule, base, refit=refit, realign=realign
    )


MethodRule = Callable[["CallArgs", TypedArray, Value | None], Value | None]

_METHODS: dict[str, MethodRule] = {}


def methods(*names: str) -> Callable[[MethodRule], MethodRule]:
    def register(rule: MethodRule) -> MethodRule:
        for name in names:
            _METHODS[name] = rule
        return rule

    return register


def has_method(name: str) -> bool:
    return name in _METHODS


def typed_method(call: CallArgs, base_array: Value, result: Value | None) -> Value | None:
    """`x.reshape(...)`, `x.sum(axis=...)`, ... on a typed array (`call.qualname` is the method)."""
    rule = _METHODS.get(call.qualname)
    x = typed(base_array)
    if rule is None or x is None:
        return result
    return rule(call, x, result)


def axis_argument(
    value: Value | None, default: int | None | Unreadable
) -> int | tuple[int, ...] | None | Unreadable:
    """An `axis=` argument: an int, a tuple of ints, None; `default` when absent."""
    if value is None:
        return default
    if isinstance(value, Const) and value.value is None:
        return None
    single = as_int(value)
    if single is not None:
        return single
    return ints_argument(value)


def ints_argument(value: Value | None) -> tuple[int, ...] | Unreadable:
    """A tuple of ints (a shape, a permutation), or a single int as a 1-tuple."""
    if value is None:
        return UNREADABLE
    single = as_int(value)
    if single is not None:
        return (single,)
    if isinstance(value, Seq):
        items = [as_int(i) for i in value.items]
        if all(i is not None for i in items):
            return tuple(i for i in items if i is not None)
    return UNREADABLE


def flag_argument(value: Value | None) -> bool | None:
    if value is None:
        return False
    if isinstance(value, Const) and isinstance(value.value, bool):
        return value.value
    return None


def typed_of(*values: Value | None) -> list[TypedArray]:
    return [t for t in (typed(v) for v in values) if t is not None]
