"""Slices, padding and loops whose result shape the call itself says: `lax.slice(_in_dim)`,
`lax.dynamic_slice(_in_dim)`, `lax.dynamic_index_in_dim`, `lax.dynamic_update_slice` and its
`_in_dim`/`_index_in_dim` forms, `jnp.pad`, `lax.fori_loop`/`while_loop`/`scan` (the carry), and arrays
made from a shape (`lax.broadcasted_iota`, `lax.iota`, `jnp.eye`, `jnp.full_like`, `jnp.bincount`
with `length=`).

Real code slices and updates its caches and blocks with these (maxtext usp_collective_test.py
`lax.dynamic_slice_in_dim(output, start, chunk, axis=2)`, tunix `lax.dynamic_update_slice(
cache['v'], value_proj, (0, end, 0, 0))`, jax-llm-examples `jnp.pad(chunk, [(0, 0), (0, n)])`).
Where the call fixes the rank, the rank is known even when the operand's is not: `dynamic_slice`
gives `slice_sizes`, an update keeps its operand's shape and takes one start index per dimension,
`pad` with a pair per dimension needs that many (JAX raises otherwise). A loop's result has the
shape of its initial carry: JAX raises when the body returns another. Anything not covered
exactly gives an array of unknown rank, never a guess.
"""

from __future__ import annotations

from shardls.analysis.library import CallArgs
from shardls.analysis.library.array_moves import axis_of, operand
from shardls.analysis.library.convert import dtype_of, python_scalar_array, shape_of
from shardls.analysis.library.registry import calls
from shardls.analysis.values import ArrayV, Const, DictV, Seq, Unknown, Value, as_int
from shardls.core import parse_dtype

_LAX = "jax.lax."
_INT32 = parse_dtype("int32")

Shape = tuple[Value, ...]


def _replaced(shape: Shape, index: int, size: Value | None) -> Shape:
    """`shape` with the dimension at `index` set to `size` (dropped for None)."""
    return tuple(d for d in (*shape[:index], size, *shape[index + 1 :]) if d is not None)


def _difference(stop: Value, start: Value, stride: int = 1) -> Value:
    """The number of elements from `start` to `stop` by `stride` (JAX's sizes for a slice)."""
    low, high = as_int(start), as_int(stop)
    if low is None or high is None or stride <= 0 or low < 0 or high < low:
        return Unknown("size of a slice")  # JAX rejects negative or decreasing bounds
    return Const(max(0, -(-(high - low) // stride)))


def _items(value: Value | None) -> tuple[Value, ...] | None:
    """The entries of a tuple or list argument (start indices, sizes)."""
    return value.items if isinstance(value, Seq) else None


# -- static and dynamic slices --------------------------------------------------------------------


@calls(_LAX + "slice")
def _slice(call: CallArgs) -> Value | None:
    """`lax.slice(x, start_indices, limit_indices, strides=None)`: one entry per dimension."""
    array = operand(call.get(0, "operand"))
    starts, limits = _items(call.get(1, "start_indices")), _items(call.get(2, "limit_indices"))
    if array is None:
        return None
    strides_value = call.get(3, "strides")
    strides = (
        _items(strides_value)
        if strides_value is not None
        and not (isinstance(strides_value, Const) and strides_value.value is None)
        else None
    )
    if starts is None or limits is None or len(starts) != len(limits):
        return ArrayV(None, array.dtype)
    rank = len(starts)
    if (array.shape is not None and len(array.shape) != rank) or (
        strides is not None and len(strides) != rank
    ):
        return ArrayV(None, array.dtype)
    steps = [as_int(s) for s in strides] if strides is not None else [1] * rank
    if any(_rejected(start, limit, step) for start, limit, step in zip(starts, limits, steps, strict=True)):
        return ArrayV(None, array.dtype)
    dims = tuple(
        _difference(limit, start, step) if step is not None else Unknown("size of a strided slice")
        for start, limit, step in zip(starts, limits, steps, strict=True)
    )
    return ArrayV(dims, array.dtype)


def _rejected(start: Value, limit: Value, step: int | None) -> bool:
    """Bounds or a stride JAX rejects: negative, decreasing, a stride below 1."""
    low, high = as_int(start), as_int(limit)
    return (
        (low is not None and low < 0)
        or (high is not None and high < 0)
        or (low is not None and high is not None and high < low)
        or (step is not None and step < 1)
    )


@calls(_LAX + "slice_in_dim")
def _slice_in_dim(call: CallArgs) -> Value | None:
    """`lax.slice_in_dim(x, start, limit, stride=1, axis=0)`: None bounds are the ends, negative
    ones count from the end (as JAX translates them)."""
    array = operand(call.get(0, "operand"))
    if array is None:
        return None
    if array.shape is None:
        return ArrayV(None, array.dtype)
    rank = len(array.shape)
    axis = axis_of(call.get(4, "axis") or Const(0), rank)
    stride = as_int(call.get(3, "stride") or Const(1))
    if axis is None or stride is None or stride <= 0:
        return ArrayV(None, array.dtype)
    length = array.shape[axis]
    bounds: list[Value] = []
    for value, default in ((call.get(1, "start_index"), Const(0)), (call.get(2, "limit_index"), length)):
        if value is None or (isinstance(value, Const) and value.value is None):
            bounds.append(default)
            continue
        number, size = as_int(value), as_int(length)
        if number is not None and number < 0:
            bounds.append(Const(number + size) if size is not None else Unknown("a bound from the end"))
        else:
            bounds.append(value)
    return ArrayV(_replaced(array.shape, axis, _difference(bounds[1], bounds[0], stride)), array.dtype)


@calls(_LAX + "dynamic_slice")
def _dynamic_slice(call: CallArgs) -> Value | None:
    """`lax.dynamic_slice(x, start_indices, slice_sizes)`: exactly `slice_sizes`."""
    array = operand(call.get(0, "operand"))
    sizes = _items(call.get(2, "slice_sizes"))
    if array is None:
        return None
    if sizes is None or (array.shape is not None and len(array.shape) != len(sizes)):
        return ArrayV(None, array.dtype)
    return ArrayV(tuple(sizes), array.dtype)


@calls(_LAX + "dynamic_slice_in_dim")
def _dynamic_slice_in_dim(call: CallArgs) -> Value | None:
    """`lax.dynamic_slice_in_dim(x, start, size, axis=0)`: `size` along `axis`."""
    array = operand(call.get(0, "operand"))
    size = call.get(2, "slice_size")
    if array is None or size is None:
        return None
    if array.shape is None:
        return ArrayV(None, array.dtype)
    axis = axis_of(call.get(3, "axis") or Const(0), len(array.shape))
    if axis is None:
        return ArrayV(None, array.dtype)
    return ArrayV(_replaced(array.shape, axis, size), array.dtype)


@calls(_LAX + "dynamic_index_in_dim")
def _dynamic_index_in_dim(call: CallArgs) -> Value | None:
    """`lax.dynamic_index_in_dim(x, index, axis=0, keepdims=True)`: 1 along `axis`, or no axis."""
    array = operand(call.get(0, "operand"))
    if array is None:
        return None
    keep = call.get(3, "keepdims")
    if array.shape is None or (keep is not None and not isinstance(keep, Const)):
        return ArrayV(None, array.dtype)
    axis = axis_of(call.get(2, "axis") or Const(0), len(array.shape))
    if axis is None:
        return ArrayV(None, array.dtype)
    kept = keep is None or (isinstance(keep, Const) and bool(keep.value))
    return ArrayV(_replaced(array.shape, axis, Const(1) if kept else None), array.dtype)


_UPDATES = {
    _LAX + "dynamic_update_slice": ("start_indices", 2),
    _LAX + "dynamic_update_slice_in_dim": ("start_index", 2),
    _LAX + "dynamic_update_index_in_dim": ("index", 2),
}


@calls(*_UPDATES)
def _dynamic_update(call: CallArgs) -> Value | None:
    """`lax.dynamic_update_slice(x, update, start_indices)` and its `_in_dim` forms: `x`'s shape
    and dtype. `dynamic_update_slice` takes one start index per dimension of `x`, and it and its
    `_in_dim` form raise unless `update` has `x`'s rank: either fixes the rank when `x`'s is not
    known, even when `x` is no value shardls knows (jax-llm-examples' `update_slice(cache.k[idx],
    k, ...)`: JAX takes only arrays there). `dynamic_update_index_in_dim` also takes an update
    one dimension short."""
    array = operand(call.get(0, "operand"))
    if array is not None and array.shape is not None:
        return ArrayV(array.shape, array.dtype)
    dtype = array.dtype if array is not None else None
    update = call.get(1, "update")
    starts = _items(call.get(2, "start_indices")) if call.qualname == _LAX + "dynamic_update_slice" else None
    rank = (
        len(starts)
        if starts is not None
        else len(update.shape)
        if isinstance(update, ArrayV) and update.shape is not None and call.qualname in _SAME_RANK
        else None
    )
    if rank is None:
        return None if array is None else ArrayV(None, dtype)
    return ArrayV(tuple(Unknown(f"size {i} of an updated array") for i in range(rank)), dtype)


_SAME_RANK = (_LAX + "dynamic_update_slice", _LAX + "dynamic_update_slice_in_dim")
"""The updates JAX rejects unless `update` has the operand's rank."""


@calls(*(_LAX + name for name in ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")))
def _scatter(call: CallArgs) -> Value | None:
    """`lax.scatter_add(operand, indices, updates, dimension_numbers)` and its kin: the operand's
    shape and dtype (jax-llm-examples' MoE unpermute). Not its layout: with a sharded operand JAX
    may refuse to choose one (it asks for `.at[...].add(out_sharding=)`), so none is claimed."""
    array = operand(call.get(0, "operand"))
    return None if array is None else ArrayV(array.shape, array.dtype)


# -- padding --------------------------------------------------------------------------------------


@calls("jax.numpy.pad", "numpy.pad")
def _pad(call: CallArgs) -> Value | None:
    """`jnp.pad(x, pad_width)`: each dimension grows by its (before, after). `pad_width` is one
    number, one pair, or a pair per dimension; N ≥ 2 pairs need rank N (JAX rejects a list of
    pairs of another length), so they give the rank even when `x`'s is not known."""
    array = operand(call.get(0, "array"))
    width = call.get(1, "pad_width")
    if array is None or width is None:
        return None
    pairs = _pairs(width)
    if pairs is None:
        return ArrayV(None, array.dtype)
    rank = len(array.shape) if array.shape is not None else len(pairs) if len(pairs) > 1 else None
    if rank is None or len(pairs) not in (1, rank):
        return ArrayV(None, array.dtype)
    dims = array.shape or tuple(Unknown(f"size {i} of a padded array") for i in range(rank))
    pairs = pairs * rank if len(pairs) == 1 else pairs
    return ArrayV(tuple(_padded(dim, pair) for dim, pair in zip(dims, pairs, strict=True)), array.dtype)


def _pairs(width: Value) -> list[tuple[Value, Value]] | None:
    """`pad_width` as (before, after) pairs: one for a number or a single pair, else one per entry."""
    if as_int(width) is not None:
        return [(width, width)]
    if not isinstance(width, Seq) or not width.items:
        return None
    if all(not isinstance(item, Seq) for item in width.items):
        if len(width.items) == 1:
            return [(width.items[0], width.items[0])]
        return [(width.items[0], width.items[1])] if len(width.items) == 2 else None
    pairs = []
    for item in width.items:
        if not isinstance(item, Seq) or len(item.items) not in (1, 2):
            return None
        if len(width.items) > 1 and len(item.items) != 2:
            return None  # JAX accepts (nd, 2), (1, 2), (2,), (1,) and () widths only
        pairs.append((item.items[0], item.items[-1]))
    return pairs


def _padded(dim: Value, pair: tuple[Value, Value]) -> Value:
    numbers = [as_int(dim), as_int(pair[0]), as_int(pair[1])]
    if any(n is None for n in numbers):
        return Unknown("size of a padded dimension")
    return Const(sum(n for n in numbers if n is not None))


# -- loops ----------------------------------------------------------------------------------------


def carried(value: Value, x64: bool = False, depth: int = 0) -> Value:
    """What a loop returns for its initial carry `value`: arrays of the same shape and dtype (the
    layout is the compiler's), Python numbers as 0-d arrays, containers item by item."""
    if depth > 16:
        return Unknown("a deeply nested loop carry")
    if isinstance(value, ArrayV):
        return ArrayV(value.shape, value.dtype)
    if isinstance(value, Seq):
        return Seq(tuple(carried(item, x64, depth + 1) for item in value.items), is_list=value.is_list)
    if isinstance(value, DictV):
        return DictV(value.keys, tuple(carried(item, x64, depth + 1) for item in value.values))
    scalar = python_scalar_array(value, x64)
    return scalar if isinstance(scalar, ArrayV) else Unknown("a loop carry not known here")


@calls(_LAX + "fori_loop")
def _fori_loop(call: CallArgs) -> Value | None:
    """`lax.fori_loop(lower, upper, body, init)`: the final carry, shaped like `init`."""
    init = call.get(3, "init_val")
    return None if init is None else carried(init, call.library.environment.x64)


@calls(_LAX + "while_loop")
def _while_loop(call: CallArgs) -> Value | None:
    """`lax.while_loop(cond, body, init)`: the final carry, shaped like `init`."""
    init = call.get(2, "init_val")
    return None if init is None else carried(init, call.library.environment.x64)


@calls(_LAX + "scan")
def _scan(call: CallArgs) -> Value | None:
    """`lax.scan(f, init, xs)`: `(carry, ys)`, the final carry shaped like `init` (what `f` stacks
    into `ys` is not followed here)."""
    init = call.get(1, "init")
    if init is None:
        return None
    return Seq((carried(init, call.library.environment.x64), Unknown("the outputs a scan stacks")))


# -- arrays made from a shape ---------------------------------------------------------------------


@calls(_LAX + "broadcasted_iota")
def _broadcasted_iota(call: CallArgs) -> Value | None:
    """`lax.broadcasted_iota(dtype, shape, dimension)`: exactly `shape`."""
    shape = shape_of(call.get(1, "shape"))
    return ArrayV(shape, dtype_of(call.get(0, "dtype"), call.library.environment.x64))


@calls(_LAX + "iota")
def _iota(call: CallArgs) -> Value | None:
    """`lax.iota(dtype, size)`: one dimension of `size`."""
    size = call.get(1, "size")
    if size is None:
        return None
    return ArrayV((size,), dtype_of(call.get(0, "dtype"), call.library.environment.x64))


@calls("jax.numpy.eye", "numpy.eye", "jax.numpy.identity", "numpy.identity")
def _eye(call: CallArgs) -> Value | None:
    """`jnp.eye(n, m=None)`, `jnp.identity(n)`: `(n, m or n)` of the default float dtype."""
    rows = call.get(0, "N", "n")
    if rows is None:
        return None
    identity = call.qualname.endswith("identity")
    columns = None if identity else call.get(1, "M")
    if columns is None or (isinstance(columns, Const) and columns.value is None):
        columns = rows
    if as_int(rows) is None and not isinstance(rows, Unknown):
        return None
    dtype = call.get(1 if identity else 3, "dtype")
    kind = dtype_of(dtype, call.library.environment.x64) if dtype is not None else None
    return ArrayV((rows, columns), kind or call.library.environment.default_dtype)


@calls("jax.numpy.full_like", "numpy.full_like")
def _full_like(call: CallArgs) -> Value | None:
    """`jnp.full_like(x, fill_value, dtype=None)`: `x`'s shape."""
    array = operand(call.get(0, "a"))
    if array is None:
        return None
    dtype = call.get(2, "dtype")
    kind = dtype_of(dtype, call.library.environment.x64) if dtype is not None else None
    return ArrayV(array.shape, kind or array.dtype)


@calls("jax.numpy.bincount")
def _bincount(call: CallArgs) -> Value | None:
    """`jnp.bincount(x, weights, minlength, length=n)`: `(n,)` (without `length=` the size is the
    data's). Counts are int32, sums of `weights` of their dtype."""
    length = call.get(None, "length")
    if length is None or (isinstance(length, Const) and length.value is None):
        return None
    weights = call.get(1, "weights")
    if weights is None or (isinstance(weights, Const) and weights.value is None):
        return ArrayV((length,), _INT32)
    return ArrayV((length,), weights.dtype if isinstance(weights, ArrayV) else None)
