"""Numbers, strings and the operators on them: literals, arithmetic, comparisons, `and`/`or`, and
operators on arrays (elementwise, with the sharded type when it is known). Every number is
bounded, and a result keeps the assumptions behind its operands."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import replace
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from shardls.analysis.evaluation.choices import map_options
from shardls.analysis.evaluation.class_modules import same_module
from shardls.analysis.evaluation.frame import Frame
from shardls.analysis.evaluation.known_values import truthiness
from shardls.analysis.node_memo import per_node
from shardls.analysis.shapes import array_operation
from shardls.analysis.sharded.operations import typed_binop
from shardls.analysis.values import (
    ArrayV,
    Choice,
    Const,
    DevicesV,
    DictV,
    MatchV,
    MeshV,
    Origin,
    PathV,
    Ref,
    Seq,
    SetV,
    ShardingV,
    SpecV,
    Unknown,
    UnknownInt,
    Value,
    as_int,
    as_str,
    assumption_of,
    guarded_alternatives,
    options,
)
from shardls.core import parse_dtype

if TYPE_CHECKING:
    from shardls.analysis.evaluation.frame import ExpressionHandlers
    from shardls.analysis.evaluator import Evaluator


_BINOPS: dict[type[ast.operator], Callable[[object, object], object]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}


_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], object]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}


_BOOL = parse_dtype("bool")


def bounded(evaluator: Evaluator, value: object, node: ast.AST, frame: Frame, what: str = "literal") -> Value:
    """Wrap a Python value, refusing the ones too large to be a shape (or to keep in memory)."""
    if what == "computed":
        what = _expression_text(node)
    if isinstance(value, bool) or value is None or isinstance(value, float | complex | bytes):
        return Const(value, origin=frame.origin(what, node))
    if isinstance(value, int):
        if value.bit_length() > evaluator.limits.int_bits:
            return Unknown("integer too large")
        return Const(value, origin=frame.origin(what, node))
    if isinstance(value, str):
        if len(value) > evaluator.limits.string:
            return Unknown("string too long")
        return Const(value, origin=frame.origin(what, node))
    return Unknown(f"{type(value).__name__} value")


def _eval_Constant(evaluator: Evaluator, node: ast.Constant, frame: Frame) -> Value:
    key = (id(node), frame.segment.first_line, frame.module.path)
    kept = evaluator.literals.get(key)
    if kept is None:
        value = (
            Ref("builtins.Ellipsis") if node.value is Ellipsis else evaluator.bounded(node.value, node, frame)
        )
        kept = evaluator.literals[key] = (node, value)
    return kept[1]


def _eval_JoinedStr(evaluator: Evaluator, node: ast.JoinedStr, frame: Frame) -> Value:
    parts: list[str] = []
    for value in node.values:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(value.value)
            continue
        inner = evaluator.eval(value.value, frame) if isinstance(value, ast.FormattedValue) else Unknown("")
        if not isinstance(inner, Const):
            return Unknown("formatted string with unknown parts")
        parts.append(str(inner.value))
    return evaluator.bounded("".join(parts), node, frame, "computed")


def _eval_BinOp(evaluator: Evaluator, node: ast.BinOp, frame: Frame) -> Value:
    left = evaluator.eval(node.left, frame)
    right = evaluator.eval(node.right, frame)
    return evaluator.binop(type(node.op), left, right, node, frame)


def _eval_UnaryOp(evaluator: Evaluator, node: ast.UnaryOp, frame: Frame) -> Value:
    operand = evaluator.eval(node.operand, frame)
    return map_options(evaluator, operand, lambda v: _unary(evaluator, node, v, frame))


def _unary(evaluator: Evaluator, node: ast.UnaryOp, value: Value, frame: Frame) -> Value:
    if isinstance(value, ArrayV) and not isinstance(node.op, ast.Not):
        return value  # elementwise: the same shape, dtype and sharding
    if not isinstance(value, Const):
        return Unknown("operand unknown", symbol=_symbol(value, "-"))
    try:
        if isinstance(node.op, ast.USub):
            result: object = -value.value  # type: ignore[operator]
        elif isinstance(node.op, ast.UAdd):
            result = +value.value  # type: ignore[operator]
        elif isinstance(node.op, ast.Not):
            result = not value.value
        else:
            result = ~value.value  # type: ignore[operator]
    except Exception:
        return Unknown("invalid operand")
    return assuming(evaluator.bounded(result, node, frame, "computed"), value)


def _eval_BoolOp(evaluator: Evaluator, node: ast.BoolOp, frame: Frame) -> Value:
    is_and = isinstance(node.op, ast.And)
    result: Value = Unknown("empty")
    for index, value_node in enumerate(node.values):
        result = evaluator.eval(value_node, frame)
        truth = truthiness(result)
        if truth is None:
            return _false_after(evaluator, node, index, frame) if is_and else Unknown("condition unknown")
        if truth is not is_and:
            return result
    return result


def _false_after(evaluator: Evaluator, node: ast.BoolOp, index: int, frame: Frame) -> Value:
    """`a and b` with `a` unknown and `b` false is falsy either way (`a` when `a` is falsy, else
    `b`); False when the unknown operands are comparisons, whose falsy value is False
    (jax-llm-examples' `is_type`: `type(x).__name__ == cls.__name__ and type(x).__module__ ==
    cls.__module__`, see `library/type_names.py`)."""
    if not isinstance(node.values[index], ast.Compare):
        return Unknown("condition unknown")
    for value_node in node.values[index + 1 :]:
        value = evaluator.eval(value_node, frame)
        truth = truthiness(value)
        if truth is False:
            return assuming(Const(False), value)
        if truth is None and not isinstance(value_node, ast.Compare):
            break
    return Unknown("condition unknown")


def _eval_Compare(evaluator: Evaluator, node: ast.Compare, frame: Frame) -> Value:
    left = evaluator.eval(node.left, frame)
    if len(node.ops) == 1 and not isinstance(node.ops[0], (ast.In, ast.NotIn, ast.Is, ast.IsNot)):
        compared = _array_comparison(evaluator, node, left, frame)
        if compared is not None:
            return compared
    operands = [left]
    for op, comparator in zip(node.ops, node.comparators):
        right = evaluator.eval(comparator, frame)
        operands.append(right)
        if isinstance(op, (ast.In, ast.NotIn)):
            found = _contains(right, left)
            if found is None:
                return Unknown("membership unknown")
            outcome = found if isinstance(op, ast.In) else not found
        elif isinstance(left, Const) and isinstance(right, Const):
            try:
                outcome = bool(_COMPARE[type(op)](left.value, right.value))
            except Exception:
                return Unknown("comparison failed")
        elif isinstance(op, (ast.Is, ast.IsNot)) and _never_none(left, right):
            outcome = isinstance(op, ast.IsNot)  # `spec is not None` on a spec
        elif isinstance(op, (ast.Eq, ast.NotEq)) and (same := _same_items(left, right)) is not None:
            outcome = same is isinstance(op, ast.Eq)  # `path[-2:] == ("mlp", "kernel")`
        elif isinstance(op, (ast.Eq, ast.NotEq)) and (same := same_module(left, right)) is not None:
            outcome = same is isinstance(op, ast.Eq)  # `type(x).__module__ == cls.__module__`
        else:
            return Unknown("comparison unknown")
        if not outcome:
            return assuming(Const(False), *operands)
        left = right
    return assuming(Const(True), *operands)


def _same_items(left: Value, right: Value) -> bool | None:
    """`==` of two tuples or lists of known items (a tuple never equals a list); None when an
    item is not known."""
    if not isinstance(left, Seq) or not isinstance(right, Seq):
        return None
    if left.is_list is not right.is_list or len(left.items) != len(right.items):
        return False
    pairs = list(zip(left.items, right.items))
    if not all(isinstance(a, Const) and isinstance(b, Const) for a, b in pairs):
        return None
    return all(a.value == b.value for a, b in pairs)  # type: ignore[attr-defined]


def _contains(container: Value, item: Value) -> bool | None:
    """`item in container` for a known item and container (a substring of a string: `':' in
    mesh_spec`); None when either is not known."""
    if not isinstance(item, Const):
        return None
    if isinstance(container, Const) and isinstance(container.value, str):
        return item.value in container.value if isinstance(item.value, str) else None
    if not isinstance(container, (Seq, SetV, DictV)):
        return None
    members = container.keys if isinstance(container, DictV) else container.items
    if not all(isinstance(m, Const) for m in members):
        return None
    return any(item.value == m.value for m in members)  # type: ignore[attr-defined]


def _array_comparison(evaluator: Evaluator, node: ast.Compare, left: Value, frame: Frame) -> Value | None:
    """`x > 0` on arrays: a boolean array of the broadcast shape (typed when `x`'s type is)."""
    right = evaluator.eval(node.comparators[0], frame)
    if not isinstance(left, ArrayV) and not isinstance(right, ArrayV):
        return None
    shaped = array_operation(ast.Add, left, right)
    base = replace(shaped, dtype=_BOOL) if isinstance(shaped, ArrayV) else shaped
    return typed_binop(evaluator, type(node.ops[0]), left, right, node, frame, base) or base


def binop(
    evaluator: Evaluator, op: type[ast.operator], left: Value, right: Value, node: ast.AST, frame: Frame
) -> Value:
    if isinstance(left, Choice) or isinstance(right, Choice):
        every = len(list(options(left))) * len(list(options(right)))
        pairs = guarded_alternatives([left, right], limit=every)
        with evaluator.branches():
            results = [evaluator.binop(op, a, b, node, frame) for (a, b), _ in pairs]
        return evaluator.choice(results, [guard for _, guard in pairs])
    if isinstance(left, Seq) and isinstance(right, Seq) and op is ast.Add:
        if len(left.items) + len(right.items) > evaluator.limits.collection:
            return Unknown("collection too large")
        return Seq(left.items + right.items, left.is_list)
    if op is ast.Mult and (isinstance(left, Seq) or isinstance(right, Seq)):
        seq, count = (left, as_int(right)) if isinstance(left, Seq) else (right, as_int(left))
        assert isinstance(seq, Seq)
        if count is None:
            return Unknown("repetition count unknown")
        if len(seq.items) * max(count, 0) > evaluator.limits.collection:
            return Unknown("collection too large")
        return Seq(seq.items * count, seq.is_list)
    if isinstance(left, Const) and isinstance(right, Const):
        return assuming(_arith(evaluator, op, left.value, right.value, node, frame), left, right)
    if op is ast.Div and (isinstance(left, PathV) or isinstance(right, PathV)):
        return _path_joined(left, right)
    array = array_operation(op, left, right)
    if array is not None:
        return typed_binop(evaluator, op, left, right, node, frame, array) or array
    symbol = _binop_symbol(op, left, right)
    if op in _INT_CLOSED and _is_int(left) and _is_int(right):
        return UnknownInt("arithmetic on ints not known here", symbol=symbol)
    return Unknown("arithmetic on unknown values", symbol=symbol)


def _path_joined(left: Value, right: Value) -> Value:
    """`Path / str`, `str / Path`, `Path / Path`: the joined `Path`."""
    parts = [v.path if isinstance(v, PathV) else as_str(v) for v in (left, right)]
    if parts[0] is None or parts[1] is None:
        return Unknown("a path joined with a value not known here")
    return PathV(str(PurePath(parts[0], parts[1])))


_INT_CLOSED = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)
"""Operators that give an int for two ints."""


def _is_int(value: Value) -> bool:
    """A Python int, its value known or not (a bool is not counted: `True + n` is rare)."""
    return isinstance(value, UnknownInt) or (type(value) is Const and type(value.value) is int)


def _arith(
    evaluator: Evaluator, op: type[ast.operator], a: object, b: object, node: ast.AST, frame: Frame
) -> Value:
    limit = evaluator.limits.int_bits
    if isinstance(a, str | bytes) or isinstance(b, str | bytes):
        if op is ast.Mult:
            count = b if isinstance(b, int) else a
            text = a if isinstance(a, str | bytes) else b
            if not isinstance(count, int) or not isinstance(text, str | bytes):
                return Unknown("invalid operands")
            if len(text) * max(count, 0) > evaluator.limits.string:
                return Unknown("string too long")
        elif op is ast.Mod:
            return Unknown("string formatting")
    elif isinstance(a, int) and isinstance(b, int):
        if op is ast.Pow:
            if b < 0 or (abs(a) > 1 and b * max(a.bit_length(), 1) > limit):
                return Unknown("integer too large") if b >= 0 else _float_pow(evaluator, a, b, node, frame)
        elif op is ast.LShift and b > limit:
            return Unknown("integer too large")
    function = _BINOPS.get(op)
    if function is None:
        return Unknown("operator not modelled")
    try:
        result = function(a, b)
    except Exception:
        return Unknown("arithmetic error")
    return evaluator.bounded(result, node, frame, "computed")


def _float_pow(evaluator: Evaluator, a: int, b: int, node: ast.AST, frame: Frame) -> Value:
    try:
        return evaluator.bounded(float(a) ** b, node, frame, "computed")
    except Exception:
        return Unknown("arithmetic error")


def assuming(result: Value, *operands: Value | None) -> Value:
    """`result` computed from `operands`, keeping the first assumption behind them (a size derived
    from the default device count is as assumed as the count itself)."""
    assumption = assumption_of(*operands)
    if assumption is None or not isinstance(result, Const):
        return result
    origin = result.origin or Origin("computed")
    return replace(result, origin=replace(origin, assumption=assumption))


_NEVER_NONE = (SpecV, ShardingV, ArrayV, MeshV, DevicesV, Seq, DictV, SetV, MatchV)
"""Values that are known objects, so `value is None` is decided (False): xlstm-jax's
`initialize_mesh(config, device_array=np.array(jax.devices())[0:1])` tests `if device_array is
None:` before reshaping it, and undecided the test also reshaped all the devices there."""


def _never_none(left: Value, right: Value) -> bool:
    """`x is None` / `x is not None` where one side is None and the other a known object."""
    return any(
        isinstance(a, Const) and a.value is None and isinstance(b, _NEVER_NONE)
        for a, b in ((left, right), (right, left))
    )


def _symbol(value: Value, suffix: str) -> str | None:
    if isinstance(value, Unknown) and value.symbol:
        return value.symbol
    return None


def _binop_symbol(op: type[ast.operator], left: Value, right: Value) -> str | None:
    symbols = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%", ast.Div: "/"}
    sign = symbols.get(op)
    if sign is None:
        return None

    def text(value: Value) -> str | None:
        if isinstance(value, Const) and isinstance(value.value, int):
            return str(value.value)
        if isinstance(value, Unknown) and value.symbol:
            return value.symbol if value.symbol.isidentifier() else f"({value.symbol})"
        return None

    a, b = text(left), text(right)
    return f"{a}{sign}{b}" if a is not None and b is not None else None


@per_node
def _expression_text(node: ast.AST) -> str:
    """How provenance names a computed value (cached per node: a loop or a comprehension
    computes the same expression thousands of times, and `ast.unparse` is costly)."""
    try:
        text = ast.unparse(node)
    except Exception:
        return "computed"
    return f"`{text}`" if len(text) <= 48 else "computed"


EXPRESSIONS: ExpressionHandlers = {
    ast.Constant: _eval_Constant,
    ast.JoinedStr: _eval_JoinedStr,
    ast.BinOp: _eval_BinOp,
    ast.UnaryOp: _eval_UnaryOp,
    ast.BoolOp: _eval_BoolOp,
    ast.Compare: _eval_Compare,
}
"""The expressions this module evaluates (`Evaluator.eval` dispatches on the node's type)."""
