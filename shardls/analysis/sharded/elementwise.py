"""Operators, elementwise functions, activations, `where`, `*_like` and dtype conversions: each
keeps (or broadcasts) its operands' shardings, by the core's rules.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shardls.analysis.sharded.propagate import (
    UNREADABLE,
    apply,
    dtype_argument,
    first_typed,
    operand,
    spec_argument,
    typed,
    untyped,
)
from shardls.analysis.sharded.registry import JNP, apply_call, axis_argument, calls, methods, typed_of
from shardls.analysis.values import Const, TypedArray, Value
from shardls.core.typing import ACTIVATIONS, activation, astype, binary, full_like, matmul, relu, unary, where

if TYPE_CHECKING:
    from shardls.analysis.evaluator import Evaluator, Frame
    from shardls.analysis.library import CallArgs

_OPERATORS: dict[type[ast.AST], str] = {
    ast.Add: "add",
    ast.Sub: "subtract",
    ast.Mult: "multiply",
    ast.Div: "divide",
    ast.Gt: "greater",
    ast.GtE: "greater",
    ast.Lt: "less",
    ast.LtE: "less",
    ast.Eq: "equal",
    ast.NotEq: "not_equal",
}
"""Python operators as jnp functions. `>=` shares `>`'s rule (and `<=` `<`'s): same broadcasting
rule, same boolean result."""

_SYMBOLS: dict[type[ast.AST], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.MatMult: "@",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Eq: "==",
    ast.NotEq: "!=",
}

_BINARY_FUNCTIONS = {
    **{JNP + n: n for n in ("add", "subtract", "multiply", "divide", "maximum", "minimum")},
    **{JNP + n: n for n in ("greater", "less", "equal", "not_equal")},
    JNP + "true_divide": "divide",
    JNP + "greater_equal": "greater",
    JNP + "less_equal": "less",
}

_UNARY_FUNCTIONS = {
    **{JNP + n: n for n in ("exp", "log", "tanh", "sin", "sqrt", "negative", "abs", "square")},
    JNP + "cos": "sin",
    JNP + "log1p": "log",
    JNP + "expm1": "exp",
    "jax.lax.rsqrt": "sqrt",
    "jax.nn.sigmoid": "sigmoid",
    "jax.nn.tanh": "tanh",
}
"""Each function with the core unary rule it shares: every one keeps its operand's sharding and
converts an integer operand to float."""


def typed_binop(
    evaluator: Evaluator,
    op: type[ast.AST],
    left: Value,
    right: Value,
    node: ast.AST,
    frame: Frame,
    base: Value | None,
) -> Value | None:
    """`x + y`, `x @ w`, `x > 0`: the operator's rule when an operand's type is known."""
    like = first_typed((left, right))
    if like is None:
        return base
    a, b = operand(left, like), operand(right, like)
    if a is None or b is None:
        return untyped(base)
    text = f"{_SYMBOLS.get(op, '?')}"
    operands = typed_of(left, right)
    if op is ast.MatMult:
        return apply(
            evaluator,
            frame,
            node,
            text,
            operands,
            lambda: matmul(a, b),
            base,
            refit=lambda ops, out: matmul(ops[0], ops[1], out_sharding=out),
        )
    name = _OPERATORS.get(op)
    if name is None:
        return untyped(base)
    return apply(evaluator, frame, node, text, operands, lambda: binary(name, a, b), base)


@calls(*_BINARY_FUNCTIONS)
def _binary_function(call: CallArgs, base: Value | None) -> Value | None:
    left, right = call.get(0, "x1", "x"), call.get(1, "x2", "y")
    like = first_typed((left, right))
    if left is None or right is None or like is None:
        return base
    a, b = operand(left, like), operand(right, like)
    if a is None or b is None:
        return untyped(base)
    op = _BINARY_FUNCTIONS[call.qualname]
    return apply_call(call, typed_of(left, right), lambda: binary(op, a, b), base)


@calls(*_UNARY_FUNCTIONS)
def _unary_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "x"))
    if x is None or len(call.args) + len(call.kwargs) != 1:
        return untyped(base)
    op = _UNARY_FUNCTIONS[call.qualname]
    return apply_call(call, [x], lambda: unary(op, x.type), base)


@calls("jax.nn.relu")
def _relu(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "x"))
    return untyped(base) if x is None else apply_call(call, [x], lambda: relu(x.type), base)


@calls(*(f"jax.nn.{name}" for name in ACTIVATIONS))
def _activation(call: CallArgs, base: Value | None) -> Value | None:
    """`jax.nn.gelu(x)`, `jax.nn.softmax(x, axis=-1)`, ...: each with its own dtype and unreduced rules."""
    x = typed(call.get(0, "x"))
    name = call.qualname.rsplit(".", 1)[-1]
    axis = axis_argument(call.get(1, "axis"), default=-1) if name in ("softmax", "log_softmax") else -1
    if x is None or axis is UNREADABLE or any(k not in ("axis", "approximate") for k in call.kwargs):
        return untyped(base)
    if name == "gelu" and call.get(1, "approximate") not in (None, Const(True), Const(False)):
        return untyped(base)
    return apply_call(call, [x], lambda: activation(name, x.type, axis), base)


@calls(JNP + "where")
def _where(call: CallArgs, base: Value | None) -> Value | None:
    args = [call.get(0, "condition"), call.get(1, "x"), call.get(2, "y")]
    like = first_typed(args)
    if like is None or any(a is None for a in args):
        return base
    c, x, y = (operand(a, like) for a in args if a is not None)
    if c is None or x is None or y is None:
        return untyped(base)
    return apply_call(call, typed_of(*args), lambda: where(c, x, y), base)


@calls(*(JNP + n for n in ("zeros_like", "ones_like", "empty_like")), JNP + "full_like")
def _like(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    dtype_index = 2 if call.qualname.endswith("full_like") else 1
    dtype = dtype_argument(call.get(dtype_index, "dtype"), call.library.environment.x64)
    out = spec_argument(call.get(None, "out_sharding", "device"))
    if x is None or dtype is UNREADABLE or out is UNREADABLE or call.get(None, "shape") is not None:
        return untyped(base) if x else base
    return apply_call(call, [x], lambda: full_like(x.type, dtype, out_sharding=out), base)


@calls("jax.lax.convert_element_type", JNP + "astype")
def _convert(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "operand", "x"))
    dtype = dtype_argument(call.get(1, "new_dtype", "dtype"), call.library.environment.x64)
    if x is None or dtype is None or dtype is UNREADABLE:
        return untyped(base)
    return apply_call(call, [x], lambda: astype(x.type, dtype), base)


@methods("astype")
def _astype_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    dtype = dtype_argument(call.get(0, "dtype"), call.library.environment.x64)
    if dtype is None or dtype is UNREADABLE:
        return untyped(base)
    return apply_call(call, [x], lambda: astype(x.type, dtype), base)
