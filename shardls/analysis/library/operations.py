"""Array operations whose result shape is known: `dot`, `matmul`, `einsum`, `ragged_dot`, basic indexing
(`x[0:4]`) and `x.at[...]` with its `.get()`/`.set()`/... methods.

In Explicit mode these operations take `out_sharding=` (the layout of their result), so the
recognizers need the result's shape to lay it out; the shape rules are in `analysis/shapes.py`.
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.array_functions import einsum_labels
from shardls.analysis.library.convert import dtype_of, sharding_of
from shardls.analysis.library.registry import attributes, calls, methods, subscripts
from shardls.analysis.shapes import IndexItem, Shape, array_operation, dot_shape, einsum_shape, index_shape
from shardls.analysis.sharded.operations import typed_get, typed_update
from shardls.analysis.values import (
    ArrayV,
    BoundMethod,
    Const,
    Ref,
    Seq,
    SliceV,
    Unknown,
    Value,
    as_int,
    as_str,
)
from shardls.core import DType
from shardls.core.typing.promotion import result_type


@dataclass(frozen=True)
class IndexerV(Value):
    """`x.at`: indexing it selects the elements that `.get()` reads and `.set()`/`.add()`/... update."""

    array: ArrayV


@dataclass(frozen=True)
class IndexedV(Value):
    """`x.at[index]`, with the shape of the elements it selects (None when unknown)."""

    array: ArrayV
    shape: Shape | None
    index: Value | slice | None = None
    """The index itself, for the sharding rule of `.get(out_sharding=...)`."""


_UPDATES = ("set", "apply", "add", "subtract", "multiply", "mul", "divide", "power", "min", "max")
"""`x.at[...]` methods that return `x` updated: the shape of `x`."""


# -- products ------------------------------------------------------------------------------------


@calls("jax.numpy.einsum", "numpy.einsum")
def _einsum(call: CallArgs) -> Value | None:
    """`jnp.einsum("bd,df->bf", x, w)` (the string form; the interleaved form stays unknown)."""
    subscripts = as_str(call.args[0]) if call.args else None
    if subscripts is None:
        return None
    operands = call.args[1:]
    shape = einsum_shape(subscripts, [_shape(o) for o in operands])
    if shape is None:
        shape = einsum_labels(subscripts, operands)
    return _product(call, shape, operands)


@calls("jax.numpy.dot", "numpy.dot")
def _dot(call: CallArgs) -> Value | None:
    a, b = call.get(0, "a"), call.get(1, "b")
    if a is None or b is None:
        return None
    shape_a, shape_b = _shape(a), _shape(b)
    shape = dot_shape(shape_a, shape_b) if shape_a is not None and shape_b is not None else None
    return _product(call, shape, [a, b])


@calls("jax.numpy.matmul", "numpy.matmul")
def _matmul(call: CallArgs) -> Value | None:
    a, b = call.get(0, "a"), call.get(1, "b")
    if a is None or b is None:
        return None
    product = array_operation(ast.MatMult, a, b)
    return _product(call, product.shape, [a, b]) if isinstance(product, ArrayV) else product


@calls("jax.lax.ragged_dot")
def _ragged_dot(call: CallArgs) -> Value | None:
    """`lax.ragged_dot(lhs, rhs, group_sizes)`: the rows of `lhs` `[m, k]` split into groups, each
    multiplied by its group's matrix of `rhs` `[g, k, n]`, giving `[m, n]` (the experts of MoE
    layers: maxtext's megablox fallback, jax-llm-examples' `_expert_fn`). JAX raises on any other
    rank, so the result is rank 2 even when the operands' ranks are not known; an operand whose
    known rank is another gives no shape."""
    lhs, rhs = call.get(0, "lhs"), call.get(1, "rhs")
    if lhs is None or rhs is None:
        return None
    rows = _dim(lhs, 2, 0, "rows of the ragged_dot's lhs")
    columns = _dim(rhs, 3, 2, "columns of the ragged_dot's rhs")
    shape = None if rows is None or columns is None else (rows, columns)
    return ArrayV(shape, _ragged_dtype(call, lhs, rhs), sharding_of(call.get(None, "out_sharding")))


def _dim(operand: Value, rank: int, index: int, what: str) -> Value | None:
    """Size `index` of an operand JAX requires to be of `rank`: unknown when its shape is, None
    when its known rank is another."""
    shape = _shape(operand)
    if shape is None:
        return Unknown(what)
    return shape[index] if len(shape) == rank else None


def _ragged_dtype(call: CallArgs, lhs: Value, rhs: Value) -> DType | None:
    """`preferred_element_type`, else the operands' dtypes promoted as `jnp` does (int8 with
    bfloat16 is bfloat16); the lattice here is JAX's without x64, so two different dtypes under
    x64 give no dtype."""
    x64 = call.library.environment.x64
    requested = dtype_of(call.get(None, "preferred_element_type"), x64)
    if requested is not None:
        return requested
    if not isinstance(lhs, ArrayV) or not isinstance(rhs, ArrayV) or lhs.dtype is None or rhs.dtype is None:
        return None
    if lhs.dtype == rhs.dtype:
        return lhs.dtype
    return None if x64 else result_type((lhs.dtype, False), (rhs.dtype, False))[0]


def _shape(operand: Value) -> Shape | None:
    """An operand's shape: an array's, or () for a Python number."""
    if isinstance(operand, ArrayV):
        return operand.shape
    if isinstance(operand, Const) and isinstance(operand.value, (int, float, complex)):
        return ()
    return None


def _product(call: CallArgs, shape: Shape | None, operands: list[Value]) -> Value:
    """The array a product makes: of `preferred_element_type`, else of the operands' dtype when
    they share one; laid out as `out_sharding` says."""
    requested = dtype_of(call.get(None, "preferred_element_type"), call.library.environment.x64)
    dtypes = {o.dtype for o in operands if isinstance(o, ArrayV)}
    shared: DType | None = dtypes.pop() if len(dtypes) == 1 else None
    return ArrayV(shape, requested or shared, sharding_of(call.get(None, "out_sharding")))


# -- indexing ------------------------------------------------------------------------------------


@attributes(ArrayV)
def _at(library: Library, evaluator: object, base: Value, attr: str, frame: object) -> Value | None:
    return IndexerV(base) if attr == "at" and isinstance(base, ArrayV) else None


@subscripts
def _index(base: Value, index: Value | slice) -> Value | None:
    """`x[0:4, None]` and `x.at[0:4, None]`: basic indexing keeps the shape known."""
    if isinstance(base, ArrayV):
        return ArrayV(_indexed(base, index), base.dtype)
    if isinstance(base, IndexerV):
        return IndexedV(base.array, _indexed(base.array, index), index)
    return None


@methods(IndexedV, "get")
def _get(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    indexed = method.base
    assert isinstance(indexed, IndexedV)
    result = ArrayV(indexed.shape, indexed.array.dtype, sharding_of(call.get(None, "out_sharding")))
    return typed_get(call, indexed.array, indexed.index, result)


@methods(IndexedV, *_UPDATES)
def _update(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    assert isinstance(method.base, IndexedV)
    array = method.base.array
    given = sharding_of(call.get(None, "out_sharding"))
    result = array if given is None else ArrayV(array.shape, array.dtype, given)
    return typed_update(call, method.name, array, method.base.index, result)


def _indexed(array: ArrayV, index: Value | slice) -> Shape | None:
    if isinstance(index, ArrayV):
        return _gathered(array, index)
    items = _basic_index(index)
    if array.shape is None or items is None:
        return None
    return index_shape(array.shape, items)


def _gathered(array: ArrayV, index: ArrayV) -> Shape | None:
    """`x[idx]` with an array of integers alone (a batch sampled by index): the first dimension
    is replaced by the index's shape. A boolean mask (whose result size is the data's) or an
    index of unknown dtype gives no shape."""
    integer = index.dtype is not None and index.dtype.name.startswith(("int", "uint"))
    if not integer or array.shape is None or not array.shape or index.shape is None:
        return None
    return (*index.shape, *array.shape[1:])


def _basic_index(index: Value | slice) -> tuple[IndexItem, ...] | None:
    """An index as basic-indexing entries; None for anything else (arrays, lists, unknown values),
    whose result shape depends on more than the index."""
    entries = index.items if isinstance(index, Seq) and not index.is_list else (index,)
    items = [_entry(entry) for entry in entries]
    basic = [item for item in items if not isinstance(item, _NotBasic)]
    return tuple(basic) if len(basic) == len(items) else None


class _NotBasic(enum.Enum):
    NOT_BASIC = enum.auto()


_NOT_BASIC = _NotBasic.NOT_BASIC


def _entry(value: Value | slice) -> IndexItem | _NotBasic:
    if isinstance(value, slice):
        return value
    if isinstance(value, SliceV):
        return _window(value) or _NOT_BASIC
    if (isinstance(value, Const) and value.value is None) or (
        isinstance(value, Ref) and value.qualname.endswith(".newaxis")
    ):
        return None
    if isinstance(value, Ref) and value.qualname == "builtins.Ellipsis":
        return Ellipsis
    position = as_int(value)
    return position if position is not None else _NOT_BASIC


def _window(value: SliceV) -> slice | None:
    """The slice, its bounds as numbers where known; a bound not known stays the value it is (the
    slice still keeps its axis, of a size not known: llama3's `next_tokens.at[:, cache.iter - 1 :
    cache.iter]`). None for a step of 0 (JAX raises)."""
    given = (value.lower, value.upper, value.step)
    bounds = [None if part is None else as_int(part) for part in given]
    if bounds[2] == 0:
        return None
    return slice(*(part if b is None else b for b, part in zip(bounds, given)))
