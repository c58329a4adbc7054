"""Products: `@`'s functions, `einsum` and `lax.dot_general`, with and without `out_sharding=`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shardls.analysis.sharded.propagate import UNREADABLE, Unreadable, spec_argument, typed, untyped
from shardls.analysis.sharded.registry import JNP, apply_call, calls, ints_argument
from shardls.analysis.values import Seq, Value, as_str
from shardls.core.typing import dot, dot_general, einsum, matmul
from shardls.core.typing.contraction import DimensionNumbers

if TYPE_CHECKING:
    from shardls.analysis.library import CallArgs


@calls(JNP + "matmul", JNP + "dot")
def _product(call: CallArgs, base: Value | None) -> Value | None:
    a, b = typed(call.get(0, "a")), typed(call.get(1, "b"))
    out = spec_argument(call.get(None, "out_sharding"))
    if a is None or b is None or out is UNREADABLE or call.get(None, "preferred_element_type") is not None:
        return untyped(base) if (a or b) else base
    rule = matmul if call.qualname.endswith("matmul") else dot
    refit = None if out is not None else lambda ops, spec: rule(ops[0], ops[1], out_sharding=spec)
    return apply_call(call, [a, b], lambda: rule(a.type, b.type, out_sharding=out), base, refit=refit)


@calls(JNP + "einsum")
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
    refit = (
        None if out is not None else lambda ops, spec: einsum(subscripts, ops[0], ops[1], out_sharding=spec)
    )
    return apply_call(
        call, [a, b], lambda: einsum(subscripts, a.type, b.type, out_sharding=out), base, refit=refit
    )


@calls("jax.lax.dot_general")
def _dot_general(call: CallArgs, base: Value | None) -> Value | None:
    """`lax.dot_general(lhs, rhs, (((1,), (0,)), ((), ())), out_sharding=...)`."""
    a, b = typed(call.get(0, "lhs")), typed(call.get(1, "rhs"))
    numbers = _dimension_numbers(call.get(2, "dimension_numbers"))
    out = spec_argument(call.get(None, "out_sharding"))
    if a is None or b is None or numbers is None or out is UNREADABLE:
        return untyped(base) if (a or b) else base
    if call.get(4, "preferred_element_type") is not None or a.type.dtype != b.type.dtype:
        return untyped(base)  # lax.dot_general does not promote: mixed dtypes are its own error
    refit = (
        None if out is not None else lambda ops, spec: dot_general(ops[0], ops[1], numbers, out_sharding=spec)
    )
    return apply_call(
        call, [a, b], lambda: dot_general(a.type, b.type, numbers, out_sharding=out), base, refit=refit
    )


def _dimension_numbers(value: Value | None) -> DimensionNumbers | None:
    if not isinstance(value, Seq) or len(value.items) != 2:
        return None
    pairs = []
    for pair in value.items:
        if not isinstance(pair, Seq) or len(pair.items) != 2:
            return None
        dims = [
            ints_argument(side) if not (isinstance(side, Seq) and not side.items) else ()
            for side in pair.items
        ]
        if any(d is UNREADABLE for d in dims):
            return None
        pairs.append(tuple(d for d in dims if not isinstance(d, Unreadable)))
    (lc, rc), (lb, rb) = pairs
    return (lc, rc), (lb, rb)
