"""`jax.nn` activations and `softmax`/`log_softmax`: the operand's shape and sharding, always.

They are compositions of elementwise operations and (for softmax) reductions over the axis with
`keepdims`, so no sharding is ever refused: a sharded softmax axis is reduced with an
all-reduce. What differs between them is the result dtype for integer and boolean operands
(JAX promotes them to float32, some weakly, some not at all) and how an unreduced or reduced
operand fails; both were established by running JAX 0.10 and are tabled here.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from shardls.core.typing.elementwise import convert, not_implemented_for_unreduced
from shardls.core.typing.errors import VALUE_ERROR, ShapeError
from shardls.core.typing.promotion import BOOL, FLOAT32, INT32, is_inexact
from shardls.core.typing.reductions import check_axes
from shardls.core.typing.types import ShardedType


class _Dtype(enum.Enum):
    """The result dtype of a non-float operand."""

    KEEP = "keep"
    FLOAT = "float32"
    WEAK_FLOAT = "~float32"
    WEAK_INT = "~int32"
    REFUSED = "refused"


class _Reduced(enum.Enum):
    """What a reduced operand does (the first primitive without a rule decides)."""

    KEEP = "keep"
    NOT_IMPLEMENTED = "not implemented"
    INDEXED = "pspec[...]"
    STARRED = "*pspec"


@dataclass(frozen=True)
class _Rule:
    integer: _Dtype
    boolean: _Dtype
    reduced: _Reduced
    first: str
    """The first primitive, whose missing unreduced rule refuses an unreduced operand."""
    refusing_primitive: str = ""
    """The primitive whose dtype check refuses a boolean (or integer) operand."""


_RULES: dict[str, _Rule] = {
    "gelu": _Rule(_Dtype.FLOAT, _Dtype.FLOAT, _Reduced.NOT_IMPLEMENTED, "integer_pow"),
    "silu": _Rule(_Dtype.REFUSED, _Dtype.REFUSED, _Reduced.KEEP, "logistic", "logistic"),
    "swish": _Rule(_Dtype.REFUSED, _Dtype.REFUSED, _Reduced.KEEP, "logistic", "logistic"),
    "softplus": _Rule(_Dtype.FLOAT, _Dtype.WEAK_FLOAT, _Reduced.KEEP, "max"),
    "log_sigmoid": _Rule(_Dtype.FLOAT, _Dtype.REFUSED, _Reduced.KEEP, "neg", "neg"),
    "mish": _Rule(_Dtype.FLOAT, _Dtype.WEAK_FLOAT, _Reduced.KEEP, "max"),
    "elu": _Rule(_Dtype.WEAK_FLOAT, _Dtype.WEAK_FLOAT, _Reduced.INDEXED, "gt"),
    "leaky_relu": _Rule(_Dtype.WEAK_FLOAT, _Dtype.WEAK_FLOAT, _Reduced.KEEP, "ge"),
    "relu6": _Rule(_Dtype.WEAK_FLOAT, _Dtype.WEAK_FLOAT, _Reduced.KEEP, "max"),
    "celu": _Rule(_Dtype.WEAK_FLOAT, _Dtype.WEAK_FLOAT, _Reduced.KEEP, "max"),
    "selu": _Rule(_Dtype.WEAK_FLOAT, _Dtype.WEAK_FLOAT, _Reduced.INDEXED, "gt"),
    "hard_tanh": _Rule(_Dtype.KEEP, _Dtype.WEAK_INT, _Reduced.INDEXED, "gt"),
    "softmax": _Rule(_Dtype.FLOAT, _Dtype.REFUSED, _Reduced.STARRED, "reduce_max", "sub"),
    "log_softmax": _Rule(_Dtype.FLOAT, _Dtype.REFUSED, _Reduced.STARRED, "reduce_max", "sub"),
}
ACTIVATIONS = tuple(_RULES)
_SOFTMAX = ("softmax", "log_softmax")
_NEVER_WEAK = ("gelu", *_SOFTMAX)
"""Their result is never weakly typed, even for a weak float operand (`x + 1.0` of an int array)."""


def activation(name: str, x: ShardedType, axis: int | tuple[int, ...] | None = -1) -> ShardedType:
    """`jax.nn.<name>(x)` for name in ACTIVATIONS (`axis` is softmax's and log_softmax's)."""
    rule = _RULES[name]
    if name in _SOFTMAX:
        check_axes(x, axis)
    if x.dtype == BOOL or not is_inexact(x.dtype):
        kind = rule.boolean if x.dtype == BOOL else rule.integer
        if kind is _Dtype.REFUSED:
            raise _refused(rule.refusing_primitive, x)
        x = {
            _Dtype.KEEP: x,
            _Dtype.FLOAT: convert(x, FLOAT32, weak_type=x.weak_type and x.dtype != BOOL),
            _Dtype.WEAK_FLOAT: convert(x, FLOAT32, weak_type=True),
            _Dtype.WEAK_INT: convert(x, INT32, weak_type=True),
        }[kind]
    if x.unreduced or x.reduced:
        _unreduced_or_reduced(name, rule, x)
    if name in _NEVER_WEAK and x.weak_type:
        x = convert(x, x.dtype)
    return x


def _refused(primitive: str, x: ShardedType) -> ShapeError:
    if primitive == "logistic":
        accepted = "subtypes of floating, complexfloating"
        return ShapeError(f"logistic does not accept dtype {x.dtype.name}. Accepted dtypes are {accepted}.")
    if primitive == "neg":
        accepted = "subtypes of integer, floating, complexfloating"
        return ShapeError(f"neg does not accept dtype {x.dtype.name}. Accepted dtypes are {accepted}.")
    return ShapeError(
        f"sub does not accept dtype {x.dtype.name} at position 0. Accepted dtypes at position 0 are "
        "subtypes of integer, floating, complexfloating."
    )


def _unreduced_or_reduced(name: str, rule: _Rule, x: ShardedType) -> None:
    """Softmax's first reduction reads the spec positionally; the others hit an elementwise
    primitive without an unreduced rule (and some without a reduced one)."""
    how = _Reduced.STARRED if name in _SOFTMAX else None
    if x.reduced and not x.unreduced and how is None:
        how = rule.reduced
    if how is _Reduced.STARRED or how is _Reduced.INDEXED:
        spec, fix = (
            ("*pspec", "*spec.partitions")
            if how is _Reduced.STARRED
            else ("pspec[...]", "spec.partitions[...]")
        )
        raise ShapeError(
            f"Using {spec} is dangerous when PartitionSpec has non-empty unreduced/reduced set. Please use {fix}",
            VALUE_ERROR,
        )
    if how is _Reduced.KEEP:
        return
    not_implemented_for_unreduced(rule.first, x)
