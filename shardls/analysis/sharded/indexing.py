"""Indexing and slicing of typed arrays: `x[...]`, `x.at[...].get(out_sharding=)`, `lax.slice`,
`lax.dynamic_slice`. Eager and traced code differ in JAX; where the analysis does not know which
one runs, a type is given only when both readings agree.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from shardls.analysis.sharded.propagate import UNREADABLE, Unreadable, apply, spec_argument, typed, untyped
from shardls.analysis.sharded.registry import apply_call, calls, ints_argument
from shardls.analysis.values import Const, Seq, TypedArray, Unknown, Value, as_int
from shardls.core import PartitionSpec
from shardls.core.typing import Index, ShapeError, ShardedType, TypeRejected, dynamic_slice, index, lax_slice
from shardls.core.typing.fixes import OutRule

if TYPE_CHECKING:
    from shardls.analysis.evaluator import Evaluator, Frame
    from shardls.analysis.library import CallArgs


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
    read = index_entries(index_value, x)
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
    read = index_entries(index_value, x)
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
    if tracing is None and depends_on_tracing(
        lambda concrete: index(x.type, entries, concrete=concrete, out_sharding=out)
    ):
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
        refit=None if out is not None else _at_get(entries, concrete),
    )
    return typed_result if typed_result is not None else Unknown("indexing rejected by JAX")


def _at_get(entries: tuple[Index, ...], concrete: bool) -> OutRule:
    """The index written as `x.at[...].get(out_sharding=...)`, the form a quick fix offers."""
    return lambda operands, spec: index(operands[0], entries, concrete=concrete, out_sharding=spec)


def depends_on_tracing(rule: Callable[[bool], ShardedType]) -> bool:
    """Whether JAX's answer differs between eager code (`rule(True)`, concrete operands) and
    traced code (`rule(False)`)."""
    return _outcome(lambda: rule(True)) != _outcome(lambda: rule(False))


def _outcome(rule: Callable[[], ShardedType]) -> object:
    """What JAX does: the type, or the code it rejects the operation with."""
    try:
        return rule()
    except TypeRejected as rejected:
        return rejected.problem.code
    except ShapeError as error:
        return error.jax_error
    except Exception:  # (an index no rule foresaw: no type, see `apply`)
        return None


def index_entries(value: Value | slice, x: TypedArray) -> tuple[tuple[Index, ...], list[TypedArray]] | None:
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


@calls("jax.lax.slice")
def _lax_slice(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "operand"))
    start, limit = ints_argument(call.get(1, "start_indices")), ints_argument(call.get(2, "limit_indices"))
    strides_value = call.get(3, "strides")
    strides = None if strides_value is None or strides_value == Const(None) else ints_argument(strides_value)
    if x is None or start is UNREADABLE or limit is UNREADABLE or strides is UNREADABLE:
        return untyped(base) if x else base
    return apply_call(call, [x], lambda: lax_slice(x.type, start, limit, strides), base)


@calls("jax.lax.dynamic_slice")
def _dynamic_slice(call: CallArgs, base: Value | None) -> Value | None:
    x = typed(call.get(0, "operand"))
    sizes = ints_argument(call.get(2, "slice_sizes"))
    if x is None or sizes is UNREADABLE:
        return untyped(base) if x else base
    return apply_call(call, [x], lambda: dynamic_slice(x.type, sizes), base)
