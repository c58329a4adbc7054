"""Indexed reads and writes beyond `x[...]`: `x.at[...].set/add/subtract/multiply/min/max(v)`
(with and without `out_sharding=`), `jnp.take`, `jnp.take_along_axis`, and the sorts
(`jnp.sort`, `jnp.argsort`, `lax.top_k`) whose indices feed them.

An update reads its index the way `x[...]` does; only a boolean mask makes eager and traced code
differ (a traced mask is an error, an eager one a shape only the data gives), and where the
analysis does not know which one runs, the result is typed only when both readings agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from shardls.analysis.sharded.indexing import depends_on_tracing, index_entries
from shardls.analysis.sharded.propagate import (
    UNREADABLE,
    apply,
    dtype_argument,
    operand,
    spec_argument,
    typed,
    untyped,
)
from shardls.analysis.sharded.registry import JNP, apply_call, axis_argument, calls, methods
from shardls.analysis.values import ArrayV, Const, Seq, TypedArray, Unknown, Value, as_int, as_str
from shardls.core.typing import (
    UPDATES,
    ShardedType,
    argsort,
    scatter,
    sort,
    take,
    take_along_axis,
    top_k,
)

if TYPE_CHECKING:
    from shardls.analysis.library import CallArgs

_NEUTRAL_KEYWORDS = frozenset({"indices_are_sorted", "unique_indices", "mode", "fill_value"})
"""Keywords of an update or a take that change neither the shape nor the sharding (`mode` only
with a value of `_SCATTER_MODES`/`_TAKE_MODES`)."""

_SCATTER_MODES = frozenset({"clip", "fill", "drop", "promise_in_bounds"})
"""`GatherScatterMode.from_any`'s names of the modes that gather or scatter in place (`one_hot`
is an einsum, which has other sharding rules); `take_along_axis` passes its mode there too."""

_TAKE_MODES = frozenset({"fill", "clip", "wrap"})
"""The modes `jnp.take` accepts (`raise` is a NotImplementedError)."""


def _known_mode(call: CallArgs, modes: frozenset[str]) -> bool:
    value = call.kwargs.get("mode")
    if value is None or (isinstance(value, Const) and value.value is None):
        return True
    return as_str(value) in modes


def typed_update(
    call: CallArgs, method: str, array: Value, index_value: Value | slice | None, result: Value | None
) -> Value | None:
    """`x.at[idx].<method>(values, out_sharding=...)` on a typed `x`: the scatter's type, or the
    error JAX raises. Without a type for every operand, the result has none."""
    x = typed(array)
    values_value = call.get(0, "values")
    if x is None or index_value is None or method not in UPDATES or values_value is None:
        return untyped(result)
    read = index_entries(index_value, x)
    values = operand(values_value, x)
    out = spec_argument(call.get(None, "out_sharding"))
    unknown_keywords = set(call.kwargs) - _NEUTRAL_KEYWORDS - {"values", "out_sharding"}
    if read is None or values is None or out is UNREADABLE or unknown_keywords:
        return untyped(result)
    if len(call.args) > 1 or not _known_mode(call, _SCATTER_MODES):
        return untyped(result)
    entries, arrays = read
    value_array = typed(values_value)

    def rule(concrete: bool) -> ShardedType:
        return scatter(x.type, entries, values, concrete=concrete, out_sharding=out)

    evaluator = call.evaluator
    if evaluator.tracing is None and depends_on_tracing(rule):
        return untyped(result) or Unknown("an update whose sharding depends on whether it is traced")
    concrete = not evaluator.tracing
    operands = [x, *arrays, *([value_array] if value_array is not None else [])]
    return apply(
        evaluator, call.frame, call.node, f".at[...].{method}", operands, lambda: rule(concrete), result
    )


@calls(JNP + "take")
def _take(call: CallArgs, base: Value | None) -> Value | None:
    """`jnp.take(a, indices, axis=None)`: a gather along `axis` (of the flattened `a` without)."""
    return _along(call, base, None, take, modes=_TAKE_MODES)


@methods("take")
def _take_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    """`x.take(indices, axis=None)`."""
    return _along(call, base, None, take, x, 0, modes=_TAKE_MODES)


@calls(JNP + "take_along_axis")
def _take_along_axis(call: CallArgs, base: Value | None) -> Value | None:
    """`jnp.take_along_axis(arr, indices, axis=-1)`: a gather batched along the other axes."""
    return _along(call, base, -1, take_along_axis, modes=_SCATTER_MODES)


def _along(
    call: CallArgs,
    base: Value | None,
    default_axis: int | None,
    rule: Callable[[ShardedType, ShardedType, int | None], ShardedType],
    x: TypedArray | None = None,
    first: int = 1,
    *,
    modes: frozenset[str],
) -> Value | None:
    """A take of `x` (the method's array, else the first argument) at `indices`, the argument
    at position `first`, with `axis` after it."""
    x = x or typed(call.get(0, "a", "arr"))
    indices_value = call.get(first, "indices")
    indices = operand(indices_value, x) if x is not None and indices_value is not None else None
    axis = axis_argument(call.get(first + 1, "axis"), default=default_axis)
    unknown_keywords = set(call.kwargs) - _NEUTRAL_KEYWORDS - {"a", "arr", "indices", "axis"}
    if x is None or indices is None or not isinstance(axis, int | None) or unknown_keywords:
        return untyped(base)
    if len(call.args) > first + 2 or not _known_mode(call, modes):
        return untyped(base)
    found = typed(indices_value)
    operands = [x, *([found] if found is not None else [])]
    return apply_call(call, operands, lambda: rule(x.type, indices, axis), base)


@calls(JNP + "sort", JNP + "argsort")
def _sort_function(call: CallArgs, base: Value | None) -> Value | None:
    return _sorted(call, typed(call.get(0, "a")), 1, call.qualname.rsplit(".", 1)[-1], base)


@methods("sort", "argsort")
def _sort_method(call: CallArgs, x: TypedArray, base: Value | None) -> Value | None:
    return _sorted(call, x, 0, call.qualname, base)


def _sorted(call: CallArgs, x: TypedArray | None, first: int, op: str, base: Value | None) -> Value | None:
    """`sort`/`argsort` along `axis` (default -1); `stable` and `descending` keep the sharding,
    `kind`/`order` are errors JAX raises before sharding matters, and an index `dtype` is not
    modelled (the result is then untyped)."""
    axis = axis_argument(call.get(first, "axis"), default=-1)
    dtype = dtype_argument(call.get(None, "dtype"), call.library.environment.x64)
    unknown_keywords = set(call.kwargs) - {"axis", "stable", "descending", "a"}
    if x is None or not isinstance(axis, int | None) or dtype is not None or unknown_keywords:
        return untyped(base)
    rule = sort if op == "sort" else argsort
    return apply_call(call, [x], lambda: rule(x.type, axis), base)


@calls("jax.lax.top_k")
def _top_k(call: CallArgs, base: Value | None) -> Value | None:
    """`lax.top_k(operand, k, axis=-1)`: the pair (values, indices), both typed from one rule."""
    x = typed(call.get(0, "operand"))
    k_value = call.get(1, "k")
    k = as_int(k_value) if k_value is not None else None
    axis = axis_argument(call.get(None, "axis"), default=-1)
    if x is None or k is None or not isinstance(axis, int):
        return untyped(base)
    values = apply_call(call, [x], lambda: top_k(x.type, k, axis)[0], None)
    if not isinstance(values, ArrayV) or values.typed is None:
        return untyped(base)
    indices_type = top_k(x.type, k, axis)[1]
    indices = ArrayV(
        tuple(Const(n) for n in indices_type.shape),
        indices_type.dtype,
        typed=replace(values.typed, type=indices_type),
    )
    return Seq((values, indices))
