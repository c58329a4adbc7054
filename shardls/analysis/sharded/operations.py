"""Which core rule each operation of model code is, and how its arguments are read.

Operators (`+ - * / @`, comparisons), jnp functions, `jax.nn` activations, array methods and
attributes (`x.reshape`, `x.T`, `x.sum`), and placements. An argument the rule depends on that
cannot be read (an unknown axis, an `out_sharding=` of unknown spec) means no type: never a guess.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from shardls.analysis.sharded.propagate import (
    UNREADABLE,
    Unreadable,
    apply,
    dtype_argument,
    first_typed,
    operand,
    place,
    replicated,
    spec_argument,
    typed,
    untyped,
)
from shardls.analysis.values import ArrayV, Const, Seq, TypedArray, Unknown, Value, as_int, as_str
from shardls.core import PartitionSpec
from shardls.core.typing import (
    ACTIVATIONS,
    CUMULATIVE,
    REDUCTIONS,
    Index,
    ShapeError,
    ShardedType,
    TypeRejected,
    activation,
    arg_reduce,
    array_split,
    astype,
    binary,
    broadcast_to,
    concatenate,
    cumulative,
    dot,
    dot_general,
    dynamic_slice,
    einsum,
    expand_dims,
    full_like,
    index,
    lax_concatenate,
    lax_slice,
    matmul,
    moveaxis,
    reduce,
    relu,
    reshape,
    split,
    squeeze,
    stack,
    swapaxes,
    transpose,
    unary,
    where,
)
from shardls.core.typing.contraction import DimensionNumbers

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

_JNP = "jax.numpy."
_BINARY_FUNCTIONS = {
    **{_JNP + n: n for n in ("add", "subtract", "multiply", "divide", "maximum", "minimum")},
    **{_JNP + n: n for n in ("greater", "less", "equal", "not_equal")},
    _JNP + "true_divide": "divide",
    _JNP + "greater_equal": "greater",
    _JNP + "less_equal": "less",
}
_UNARY_FUNCTIONS = {
    **{_JNP + n: n for n in ("exp", "log", "tanh", "sin", "sqrt", "negative", "abs", "square")},
    _JNP + "cos": "sin",
    _JNP + "log1p": "log",
    _JNP + "expm1": "exp",
    "jax.lax.rsqrt": "sqrt",
    "jax.nn.sigmoid": "sigmoid",
    "jax.nn.tanh": "tanh",
}
"""Each function with the core unary rule it shares: every one keeps its operand's sharding and
converts an integer operand to float."""


# -- operators -----------------------------------------------------------------------------------


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
    operands = _typed_of(left, right)
    if op is ast.MatMult:
        return apply(evaluator, frame, node, text, operands, lambda: matmul(a, b), base)
    name = _OPERATORS.get(op)
    if name is None:
        return untyped(base)
    return apply(evaluator, frame, node, text, operands, lambda: binary(name, a, b), base)


# -- calls ---------------------------------------------------------------------------------------

CallRule = Callable[["CallArgs", Value | None], Value | None]
_CALLS: dict[str, CallRule] = {}


def _calls(*qualnames: str) -> Callable[[CallRule], CallRule]:
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


def _apply(
    call: CallArgs, operands: list[TypedArray], rule: Callable[[], ShardedType], base: Value | None
) -> Value | None:
    name = call.qualname.rsplit(".", 1)[-1]
    return apply(call.evaluator, call.frame, call.node, name, operands, rule, base)


@_calls(*_BINARY_FUNCTIONS)
def _binary_function(call: CallArgs, base: Value | None) -> Value | None:
    left, right = call.get(0, "x1", "x"), call.get(1, "x2", "y")
    like = first_typed((left, right))
    if left is None or right is None or like is None:
        return base
    a, b = operand(left, like), operand(right, like)
    if a is None or b is None:
        return untyped(base)
    op = _BINARY_FUNCTIONS[call.qualname]
    return _apply(call, _typed_of(left, right), lambda: binary(op, a, b), base)


@_calls(*_UNARY_FUNCTIONS)
def _unary_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "x"))
    if x is None or len(call.args) + len(call.kwargs) != 1:
        return untyped(base)
    op = _UNARY_FUNCTIONS[call.qualname]
    return _apply(call, [x], lambda: unary(op, x.type), base)


@_calls("jax.nn.relu")
def _relu(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "x"))
    return untyped(base) if x is None else _apply(call, [x], lambda: relu(x.type), base)


@_calls(*(f"jax.nn.{name}" for name in ACTIVATIONS))
def _activation(call: CallArgs, base: Value | None) -> Value | None:
    """`jax.nn.gelu(x)`, `jax.nn.softmax(x, axis=-1)`, ...: each with its own dtype and unreduced rules."""
    x = typed(call.get(0, "x"))
    name = call.qualname.rsplit(".", 1)[-1]
    axis = _axis(call.get(1, "axis"), default=-1) if name in ("softmax", "log_softmax") else -1
    if x is None or axis is UNREADABLE or any(k not in ("axis", "approximate") for k in call.kwargs):
        return untyped(base)
    if name == "gelu" and call.get(1, "approximate") not in (None, Const(True), Const(False)):
        return untyped(base)
    return _apply(call, [x], lambda: activation(name, x.type, axis), base)


@_calls(_JNP + "where")
def _where(call: CallArgs, base: Value | None) -> Value | None:
    args = [call.get(0, "condition"), call.get(1, "x"), call.get(2, "y")]
    like = first_typed(args)
    if like is None or any(a is None for a in args):
        return base
    c, x, y = (operand(a, like) for a in args if a is not None)
    if c is None or x is None or y is None:
        return untyped(base)
    return _apply(call, _typed_of(*args), lambda: where(c, x, y), base)


@_calls(_JNP + "matmul", _JNP + "dot")
def _product(call: CallArgs, base: Value | None) -> Value | None:
    a, b = typed(call.get(0, "a")), typed(call.get(1, "b"))
    out = spec_argument(call.get(None, "out_sharding"))
    if a is None or b is None or out is UNREADABLE or call.get(None, "preferred_element_type") is not None:
        return untyped(base) if (a or b) else base
    rule = matmul if call.qualname.endswith("matmul") else dot
    return _apply(call, [a, b], lambda: rule(a.type, b.type, out_sharding=out), base)


@_calls(_JNP + "einsum")
def _einsum(call: CallArgs, base: Value | None) -> Value | None:
    subscripts = as_str(call.args[0]) if call.args else None
    operands = [typed(v) for v in call.args[1:]]
    out = spec_argument(call.get(None, "out_sharding"))
    if subscripts is None or len(operands) != 2 or None in operands or out is UNREADABLE:
        return untyped(base) if any(operands) else base
    a, b = operands
    assert a is not None and b is not None
    if call.get(None, "preferred_element_type") is not None:
        return untyped(base)
    return _apply(call, [a, b], lambda: einsum(subscripts, a.type, b.type, out_sharding=out), base)


@_calls(_JNP + "reshape", "jax.lax.reshape")
def _reshape_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a", "operand"))
    sizes = _ints(call.get(1, "shape", "new_sizes", "newshape"))
    if x is None:
        return base
    return _reshaped(call, x, sizes, base)


@_calls(_JNP + "transpose")
def _transpose_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    axes = call.get(1, "axes")
    perm = None if axes is None or (isinstance(axes, Const) and axes.value is None) else _ints(axes)
    if x is None:
        return base
    if perm is UNREADABLE:
        return untyped(base)
    return _apply(call, [x], lambda: transpose(x.type, perm), base)


@_calls(_JNP + "swapaxes")
def _swapaxes_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    one, two = as_int(call.get(1, "axis1") or Const(None)), as_int(call.get(2, "axis2") or Const(None))
    if x is None or one is None or two is None:
        return untyped(base)
    return _apply(call, [x], lambda: swapaxes(x.type, one, two), base)


@_calls(_JNP + "moveaxis")
def _moveaxis_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    src, dst = as_int(call.get(1, "source") or Const(None)), as_int(call.get(2, "destination") or Const(None))
    if x is None or src is None or dst is None:
        return untyped(base)
    return _apply(call, [x], lambda: moveaxis(x.type, src, dst), base)


@_calls(_JNP + "expand_dims")
def _expand_dims_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    axes = _axis(call.get(1, "axis"), default=UNREADABLE)
    if x is None or axes is UNREADABLE or axes is None:
        return untyped(base)
    return _apply(call, [x], lambda: expand_dims(x.type, axes), base)


@_calls(_JNP + "squeeze")
def _squeeze_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    axes = _axis(call.get(1, "axis"), default=None)
    if x is None or axes is UNREADABLE:
        return untyped(base)
    return _apply(call, [x], lambda: squeeze(x.type, axes), base)


@_calls(*(_JNP + op for op in REDUCTIONS))
def _reduction_function(call: CallArgs, base: Value | None) -> Value | None:
    return _reduced(call, typed(call.get(0, "a")), call.qualname.rsplit(".", 1)[-1], 1, base)


@_calls(_JNP + "argmax", _JNP + "argmin")
def _arg_reduction_function(call: CallArgs, base: Value | None) -> Value | None:
    return _arg_reduced(call, typed(call.get(0, "a")), 1, base)


@_calls(*(_JNP + op for op in CUMULATIVE))
def _cumulative_function(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    axis = _axis(call.get(1, "axis"), default=None)
    if (
        x is None
        or axis is UNREADABLE
        or not isinstance(axis, int | None)
        or call.get(2, "dtype") is not None
    ):
        return untyped(base)
    op = call.qualname.rsplit(".", 1)[-1]
    return _apply(call, [x], lambda: cumulative(op, x.type, axis), base)


@_calls(*(_JNP + n for n in ("zeros_like", "ones_like", "empty_like")), _JNP + "full_like")
def _like(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    dtype_index = 2 if call.qualname.endswith("full_like") else 1
    dtype = dtype_argument(call.get(dtype_index, "dtype"), call.library.environment.x64)
    out = spec_argument(call.get(None, "out_sharding", "device"))
    if x is None or dtype is UNREADABLE or out is UNREADABLE or call.get(None, "shape") is not None:
        return untyped(base) if x else base
    return _apply(call, [x], lambda: full_like(x.type, dtype, out_sharding=out), base)


@_calls("jax.lax.convert_element_type", _JNP + "astype")
def _convert(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "operand", "x"))
    dtype = dtype_argument(call.get(1, "new_dtype", "dtype"), call.library.environment.x64)
    if x is None or dtype is None or dtype is UNREADABLE:
        return untyped(base)
    return _apply(call, [x], lambda: astype(x.type, dtype), base)


@_calls("jax.device_put", "jax.sharding.reshard")
def _placement(call: CallArgs, base: Value | None) -> Value | None:
    """The placed array's type (the placement's site reports a layout JAX rejects)."""
    from shardls.analysis.library.convert import sharding_of

    if not isinstance(base, ArrayV):
        return base
    sharding = sharding_of(call.get(1, "device", "shardings", "out_shardings"))
    if sharding is None:
        return untyped(base)
    name = call.qualname.rsplit(".", 1)[-1]
    return place(call.evaluator, call.frame, call.node, name, sharding, base, typed(call.get(0, "x")))


@_calls(
    *(_JNP + n for n in ("zeros", "ones", "empty", "full", "arange", "array", "asarray")),
    *(f"jax.random.{n}" for n in ("normal", "uniform", "truncated_normal", "bernoulli", "randint")),
)
def _creation(call: CallArgs, base: Value | None) -> Value | None:
    """Made with `out_sharding=`: placed by it; made without: replicated on the context mesh
    (`jnp.asarray(x)` of a typed array is that array)."""
    from shardls.analysis.library.convert import sharding_of

    if not isinstance(base, ArrayV) or base.typed is not None:
        return base
    given = call.get(None, "out_sharding", "device", "sharding")
    name = call.qualname.rsplit(".", 1)[-1]
    if given is None:
        return replicated(call.evaluator, call.frame, call.node, name, base)
    sharding = sharding_of(given)
    if sharding is None:
        return untyped(base)
    return place(call.evaluator, call.frame, call.node, name, sharding, base, None)


@_calls(_JNP + "concatenate", _JNP + "concat", _JNP + "stack", "jax.lax.concatenate")
def _join(call: CallArgs, base: Value | None) -> Value | None:
    """`jnp.concatenate([x, y], axis)`, `jnp.stack(...)`, `lax.concatenate(operands, dimension)`."""
    arrays = call.get(0, "arrays", "operands")
    items = arrays.items if isinstance(arrays, Seq) else None
    operands = [typed(v) for v in items] if items is not None else []
    if not operands or any(t is None for t in operands):
        return untyped(base) if any(operands) else base
    known = [t for t in operands if t is not None]
    if len({t.type.mesh for t in known}) != 1:
        return untyped(base)
    types = [t.type for t in known]
    name = call.qualname.rsplit(".", 1)[-1]
    if call.qualname == "jax.lax.concatenate":
        dimension = as_int(call.get(1, "dimension") or Const(None))
        if dimension is None:
            return untyped(base)
        return _apply(call, known, lambda: lax_concatenate(types, dimension), base)
    axis = _axis(call.get(1, "axis"), default=0)
    if axis is UNREADABLE or isinstance(axis, tuple) or call.get(None, "dtype", "out") is not None:
        return untyped(base)
    if name == "stack":
        if axis is None:
            return untyped(base)
        at = axis
        return _apply(call, known, lambda: stack(types, at), base)
    return _apply(call, known, lambda: concatenate(types, axis), base)


@_calls(_JNP + "split", _JNP + "array_split")
def _split(call: CallArgs, base: Value | None) -> Value | None:
    """`jnp.split(x, 4, axis=1)`: one typed array per piece (a list of them)."""
    x = typed(call.get(0, "ary"))
    sections = call.get(1, "indices_or_sections")
    count = as_int(sections) if sections is not None else None
    points = _ints(sections) if count is None else (count,)
    axis = as_int(call.get(2, "axis") or Const(0))
    if x is None or points is UNREADABLE or axis is None:
        return untyped(base) if x else base
    rule = split if call.qualname.endswith(".split") else array_split
    pieces_of = count if count is not None else list(points)
    try:
        pieces = rule(x.type, pieces_of, axis)
    except Exception:  # (rejected or malformed: `apply` records or drops it)
        return _apply(call, [x], lambda: rule(x.type, pieces_of, axis)[0], base)
    values = [_apply(call, [x], _constant(t), None) for t in pieces]
    return Seq(tuple(v if v is not None else Unknown("a piece of split") for v in values), is_list=True)


def _constant(t: ShardedType) -> Callable[[], ShardedType]:
    return lambda: t


@_calls("jax.lax.dot_general")
def _dot_general(call: CallArgs, base: Value | None) -> Value | None:
    """`lax.dot_general(lhs, rhs, (((1,), (0,)), ((), ())), out_sharding=...)`."""
    a, b = typed(call.get(0, "lhs")), typed(call.get(1, "rhs"))
    numbers = _dimension_numbers(call.get(2, "dimension_numbers"))
    out = spec_argument(call.get(None, "out_sharding"))
    if a is None or b is None or numbers is None or out is UNREADABLE:
        return untyped(base) if (a or b) else base
    if call.get(4, "preferred_element_type") is not None or a.type.dtype != b.type.dtype:
        return untyped(base)  # lax.dot_general does not promote: mixed dtypes are its own error
    return _apply(call, [a, b], lambda: dot_general(a.type, b.type, numbers, out_sharding=out), base)


def _dimension_numbers(value: Value | None) -> DimensionNumbers | None:
    if not isinstance(value, Seq) or len(value.items) != 2:
        return None
    pairs = []
    for pair in value.items:
        if not isinstance(pair, Seq) or len(pair.items) != 2:
            return None
        dims = [_ints(side) if not (isinstance(side, Seq) and not side.items) else () for side in pair.items]
        if any(d is UNREADABLE for d in dims):
            return None
        pairs.append(tuple(d for d in dims if not isinstance(d, Unreadable)))
    (lc, rc), (lb, rb) = pairs
    return (lc, rc), (lb, rb)


@_calls(_JNP + "broadcast_to")
def _broadcast_to(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "array"))
    shape = _ints(call.get(1, "shape"))
    if x is None or shape is UNREADABLE or call.get(None, "out_sharding") is not None:
        return untyped(base) if x else base
    return _apply(call, [x], lambda: broadcast_to(x.type, shape), base)


@_calls(_JNP + "ravel")
def _ravel(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "a"))
    if x is None or call.get(1, "order") is not None:
        return untyped(base) if x else base
    return _apply(call, [x], lambda: reshape(x.type, (x.type.size,)), base)


@_calls("jax.lax.dynamic_slice")
def _dynamic_slice(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "operand"))
    sizes = _ints(call.get(2, "slice_sizes"))
    if x is None or sizes is UNREADABLE:
        return untyped(base) if x else base
    return _apply(call, [x], lambda: dynamic_slice(x.type, sizes), base)


@_calls("jax.lax.with_sharding_constraint")
def _constraint(call: CallArgs, base: Value | None) -> Value | None:
    """On Explicit axes a constraint only asserts that the type already is what it says: the
    type goes through when it matches; a mismatch is JAX's AssertionError, not typed here."""
    from shardls.analysis.library.convert import sharding_of

    x = typed(call.get(0, "x"))
    sharding = sharding_of(call.get(1, "shardings"))
    if x is None or sharding is None or not isinstance(base, ArrayV):
        return untyped(base) if x else base
    checked = place(call.evaluator, call.frame, call.node, "with_sharding_constraint", sharding, base, x)
    if checked.typed is None or checked.typed.type != x.type:
        return untyped(base)
    return replace(base, typed=x)


@_calls("jax.lax.slice")
def _lax_slice(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "operand"))
    start, limit = _ints(call.get(1, "start_indices")), _ints(call.get(2, "limit_indices"))
    strides_value = call.get(3, "strides")
    strides = None if strides_value is None or strides_value == Const(None) else _ints(strides_value)
    if x is None or start is UNREADABLE or limit is UNREADABLE or strides is UNREADABLE:
        return untyped(base) if x else base
    return _apply(call, [x], lambda: lax_slice(x.type, start, limit, strides), base)


# -- indexing ------------------------------------------------------------------------------------


def typed_subscript(
    evaluator: Evaluator,
    base: Value,
    index_value: Value | slice,
    node: ast.AST,
    frame: Frame,
    result: Value,
) -> Value:
    """`x[0:4]`, `x[:, None]`, `table[ids]` on a typed array. Whether the code runs eagerly or is
    traced changes JAX's answer (an eager partial index of a sharded array is a gather): where the
    analysis does not know which, the type is given only when both agree."""
    x = typed(base)
    if x is None:
        return result
    read = _index_entries(index_value, x)
    if read is None:
        return untyped(result) or result
    return _indexed(evaluator, frame, node, x, read, None, result)


def typed_get(
    call: CallArgs, array: Value, index_value: Value | slice | None, result: Value | None
) -> Value | None:
    """`x.at[idx].get(out_sharding=...)`: the gather's output sharding, as given."""
    x = typed(array)
    if x is None or index_value is None:
        return untyped(result)
    read = _index_entries(index_value, x)
    out = spec_argument(call.get(None, "out_sharding"))
    if read is None or out is UNREADABLE or set(call.kwargs) - {"out_sharding"}:
        return untyped(result)
    return _indexed(call.evaluator, call.frame, call.node, x, read, out, result)


def _indexed(
    evaluator: Evaluator,
    frame: Frame,
    node: ast.AST,
    x: TypedArray,
    read: tuple[tuple[Index, ...], list[TypedArray]],
    out: PartitionSpec | None,
    result: Value | None,
) -> Value:
    entries, arrays = read
    operands = [x, *arrays]
    tracing = evaluator.tracing
    if tracing is None and _outcome(x, entries, out, True) != _outcome(x, entries, out, False):
        return untyped(result) or Unknown("indexing whose sharding depends on whether it is traced")
    concrete = not tracing
    typed_result = apply(
        evaluator,
        frame,
        node,
        "[...]",
        operands,
        lambda: index(x.type, entries, concrete=concrete, out_sharding=out),
        result,
    )
    return typed_result if typed_result is not None else Unknown("indexing rejected by JAX")


def _outcome(x: TypedArray, entries: tuple[Index, ...], out: PartitionSpec | None, concrete: bool) -> object:
    """What JAX does with the index, eagerly or traced: the type, or the code it rejects it with."""
    try:
        return index(x.type, entries, concrete=concrete, out_sharding=out)
    except TypeRejected as rejected:
        return rejected.problem.code
    except ShapeError as error:
        return error.jax_error
    except Exception:  # (an index no rule foresaw: no type, see `apply`)
        return None


def _index_entries(value: Value | slice, x: TypedArray) -> tuple[tuple[Index, ...], list[TypedArray]] | None:
    """The index as the core reads it, and the typed index arrays in it; None when some entry is
    not known."""
    entries = value.items if isinstance(value, Seq) and not value.is_list else (value,)
    out: list[Index] = []
    arrays: list[TypedArray] = []
    for entry in entries:
        converted = _index_entry(entry, x)
        if converted is UNREADABLE:
            return None
        out.append(converted)
        found = typed(entry) if not isinstance(entry, slice) else None
        if found is not None:
            arrays.append(found)
    return tuple(out), arrays


def _index_entry(value: Value | slice, x: TypedArray) -> Index | Unreadable:
    from shardls.analysis.values import Ref, SliceV

    if isinstance(value, slice):
        return value
    if isinstance(value, SliceV):
        bounds = [None if part is None else as_int(part) for part in (value.lower, value.upper, value.step)]
        given = (value.lower, value.upper, value.step)
        if any(b is None and part is not None and part != Const(None) for b, part in zip(bounds, given)):
            return UNREADABLE
        return slice(*bounds)
    if isinstance(value, Const) and value.value is None:
        return None
    if isinstance(value, Ref) and value.qualname.endswith(".newaxis"):
        return None
    if isinstance(value, Ref) and value.qualname == "builtins.Ellipsis":
        return Ellipsis
    position = as_int(value)
    if position is not None:
        return position
    found = typed(value)
    if found is not None and found.type.mesh == x.type.mesh:
        return found.type
    return UNREADABLE


# -- methods and attributes ----------------------------------------------------------------------

MethodRule = Callable[["CallArgs", TypedArray, Value | None], Value | None]
_METHODS: dict[str, MethodRule] = {}


def _methods(*names: str) -> Callable[[MethodRule], MethodRule]:
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


@_methods("reshape")
def _reshape_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    given = call.args[0] if len(call.args) == 1 else Seq(tuple(call.args))
    return _reshaped(call, x, _ints(given), base)


@_methods("ravel", "flatten")
def _ravel_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    if call.args or call.kwargs:
        return untyped(base)
    return _apply(call, [x], lambda: reshape(x.type, (x.type.size,)), base)


@_methods("transpose")
def _transpose_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    given = call.args[0] if len(call.args) == 1 else Seq(tuple(call.args))
    perm = None if not call.args else _ints(given)
    if perm is UNREADABLE:
        return untyped(base)
    return _apply(call, [x], lambda: transpose(x.type, perm), base)


@_methods("swapaxes")
def _swapaxes_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    one, two = as_int(call.get(0, "axis1") or Const(None)), as_int(call.get(1, "axis2") or Const(None))
    if one is None or two is None:
        return untyped(base)
    return _apply(call, [x], lambda: swapaxes(x.type, one, two), base)


@_methods("squeeze")
def _squeeze_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    axes = _axis(call.get(0, "axis"), default=None)
    if axes is UNREADABLE:
        return untyped(base)
    return _apply(call, [x], lambda: squeeze(x.type, axes), base)


@_methods(*REDUCTIONS)
def _reduction_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    return _reduced(call, x, call.qualname, 0, base)


@_methods("argmax", "argmin")
def _arg_reduction_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    return _arg_reduced(call, x, 0, base)


@_methods("astype")
def _astype_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    dtype = dtype_argument(call.get(0, "dtype"), call.library.environment.x64)
    if dtype is None or dtype is UNREADABLE:
        return untyped(base)
    return _apply(call, [x], lambda: astype(x.type, dtype), base)


def typed_attribute(
    evaluator: Evaluator, base: Value, attr: str, node: ast.AST, frame: Frame, result: Value | None
) -> Value | None:
    """`x.T` (`x.mT` swaps the last two dimensions)."""
    x = typed(base)
    if x is None or attr not in ("T", "mT"):
        return result
    if attr == "T":
        return apply(evaluator, frame, node, ".T", [x], lambda: transpose(x.type), result)
    return apply(evaluator, frame, node, ".mT", [x], lambda: swapaxes(x.type, -1, -2), result)


# -- shared argument readers ---------------------------------------------------------------------


def _reshaped(
    call: CallArgs, x: TypedArray, sizes: tuple[int, ...] | Unreadable, base: Value | None
) -> Value | None:
    out = spec_argument(call.get(None, "out_sharding"))
    if sizes is UNREADABLE or out is UNREADABLE or call.get(None, "order") is not None:
        return untyped(base)
    return _apply(call, [x], lambda: reshape(x.type, sizes, out_sharding=out), base)


def _reduced(call: CallArgs, x: TypedArray | None, op: str, first: int, base: Value | None) -> Value | None:
    axis = _axis(call.get(first, "axis"), default=None)
    has_dtype = op in ("sum", "mean", "prod")
    keepdims = _flag(call.get(first + (3 if has_dtype else 2), "keepdims"))
    dtype = call.get(first + 1, "dtype") if has_dtype else None
    if (
        x is None
        or axis is UNREADABLE
        or keepdims is None
        or dtype is not None
        or call.get(None, "where", "initial")
    ):
        return untyped(base)
    return _apply(call, [x], lambda: reduce(op, x.type, axis, keepdims=keepdims), base)


def _arg_reduced(call: CallArgs, x: TypedArray | None, first: int, base: Value | None) -> Value | None:
    axis = _axis(call.get(first, "axis"), default=None)
    keepdims = _flag(call.get(None, "keepdims"))
    if x is None or axis is UNREADABLE or not isinstance(axis, int | None) or keepdims is None:
        return untyped(base)
    op = call.qualname.rsplit(".", 1)[-1]
    return _apply(call, [x], lambda: arg_reduce(op, x.type, axis, keepdims=keepdims), base)


def _axis(value: Value | None, default: int | None | Unreadable) -> int | tuple[int, ...] | None | Unreadable:
    """An `axis=` argument: an int, a tuple of ints, None; `default` when absent."""
    if value is None:
        return default
    if isinstance(value, Const) and value.value is None:
        return None
    single = as_int(value)
    if single is not None:
        return single
    return _ints(value)


def _ints(value: Value | None) -> tuple[int, ...] | Unreadable:
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


def _flag(value: Value | None) -> bool | None:
    if value is None:
        return False
    if isinstance(value, Const) and isinstance(value.value, bool):
        return value.value
    return None


def _typed_of(*values: Value | None) -> list[TypedArray]:
    return [t for t in (typed(v) for v in values) if t is not None]
