"""Reductions, arg-reductions and cumulative operations over axes, as functions and methods."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shardls.analysis.sharded.propagate import UNREADABLE, typed, untyped
from shardls.analysis.sharded.registry import JNP, apply_call, axis_argument, calls, flag_argument, methods
from shardls.analysis.values import TypedArray, Value
from shardls.core.typing import CUMULATIVE, REDUCTIONS, arg_reduce, cumulative, reduce

if TYPE_CHECKING:
    from shardls.analysis.library import CallArgs


@calls(*(JNP + op for op in REDUCTIONS))
def _reduction_function(call: CallArgs, base: Value | None) -> Value | None:
    return _reduced(call, typed(call.get(0, "a")), call.qualname.rsplit(".", 1)[-1], 1, base)


@calls(JNP + "argmax", JNP + "argmin")
def _arg_reduction_function(call: CallArgs, base: Value | None) -> Value | None:
    return _arg_reduced(call, typed(call.get(0, "a")), 1, base)


@calls(*(JNP + op for op in CUMULATIVE))
def _cumulative_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    axis = axis_argument(call.get(1, "axis"), default=None)
    if (
        x is None
        or axis is UNREADABLE
        or not isinstance(axis, int | None)
        or call.get(2, "dtype") is not None
    ):
        return untyped(base)
    op = call.qualname.rsplit(".", 1)[-1]
    return apply_call(call, [x], lambda: cumulative(op, x.type, axis), base)


@methods(*REDUCTIONS)
def _reduction_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    return _reduced(call, x, call.qualname, 0, base)


@methods("argmax", "argmin")
def _arg_reduction_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    return _arg_reduced(call, x, 0, base)


def _reduced(call: CallArgs, x: TypedArray | None, op: str, first: int, base: Value | None) -> Value | None:
    axis = axis_argument(call.get(first, "axis"), default=None)
    has_dtype = op in ("sum", "mean", "prod")
    keepdims = flag_argument(call.get(first + (3 if has_dtype else 2), "keepdims"))
    dtype = call.get(first + 1, "dtype") if has_dtype else None
    if (
        x is None
        or axis is UNREADABLE
        or keepdims is None
        or dtype is not None
        or call.get(None, "where", "initial")
    ):
        return untyped(base)
    return apply_call(call, [x], lambda: reduce(op, x.type, axis, keepdims=keepdims), base)


def _arg_reduced(call: CallArgs, x: TypedArray | None, first: int, base: Value | None) -> Value | None:
    axis = axis_argument(call.get(first, "axis"), default=None)
    keepdims = flag_argument(call.get(None, "keepdims"))
    if x is None or axis is UNREADABLE or not isinstance(axis, int | None) or keepdims is None:
        return untyped(base)
    op = call.qualname.rsplit(".", 1)[-1]
    return apply_call(call, [x], lambda: arg_reduce(op, x.type, axis, keepdims=keepdims), base)
