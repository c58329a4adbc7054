"""Array functions and methods that move, drop or flatten dimensions, for arrays of any layout:
`x.transpose(0, 2, 1, 3)`, `x.ravel()`, `x.swapaxes(1, 2)`, `jnp.squeeze`, `jnp.moveaxis`,
`jnp.reshape`, and those that keep the shape (`jnp.flip`, `jnp.roll`, `jnp.sort`, `jnp.isnan`),
replace one (`lax.top_k`, `jnp.take_along_axis`) or add one (`jax.nn.one_hot`).

Real code reshapes what it computed before it places it (tunix qwen2 `qkv.transpose(0, 2, 1, 3)`
before a `shard_map`, flax's `jnp.argmax(y_pred, axis=-1).ravel()`). The sharded types of these
(Explicit axes) are in `sharded/shaping.py`; here is only the shape, with symbolic sizes, so that
arrays on Auto meshes and arrays of unknown sizes keep their rank. What the operation itself
fixes counts even when the operand's rank is not known: a permutation of four axes, or a
flattening, gives that rank (JAX raises on any other). Anything else not covered exactly (an
axis out of range, a size that may or may not be 1 for a bare `squeeze()`) gives an array of
unknown rank, never a guess.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.arrays import reshaped
from shardls.analysis.library.convert import dtype_of
from shardls.analysis.library.registry import calls, methods
from shardls.analysis.shapes import broadcast
from shardls.analysis.values import ArrayV, BoundMethod, Const, Seq, Unknown, Value, as_int
from shardls.core import parse_dtype

_MODULES = ("jax.numpy", "numpy")
_BOOL = parse_dtype("bool")
_INT32 = parse_dtype("int32")

Shape = tuple[Value, ...]


def operand(value: Value | None) -> ArrayV | None:
    """The array a numpy/JAX function is given: an array, or a value not known here (whatever it
    is, the function's result is an array, of unknown rank); None for anything else."""
    if isinstance(value, ArrayV):
        return value
    if isinstance(value, Unknown):
        return ArrayV(None)
    return None


def axis_of(value: Value | None, rank: int) -> int | None:
    """An axis argument, normalised to `0 <= axis < rank`; None when unknown or out of range."""
    index = as_int(value) if value is not None else None
    if index is None or not -rank <= index < rank:
        return None
    return index % rank


def _unknown_dims(count: int, what: str) -> Shape:
    return tuple(Unknown(f"size {i} of {what}") for i in range(count))


def flattened_size(shape: Shape | None) -> Value:
    """The size of an array flattened: the product of its sizes when all are known."""
    total = 1
    for dim in shape or (Unknown(""),):
        number = as_int(dim)
        if number is None:
            return Unknown("size of a flattened array")
        total *= number
    return Const(total)


# -- permutations ---------------------------------------------------------------------------------


def permuted(array: ArrayV, axes: Value | None) -> ArrayV:
    """`array` transposed by `axes` (reversed for None). A permutation of N axes gives rank N
    even when the array's rank is not known (JAX raises when it is not the array's)."""
    if axes is None or (isinstance(axes, Const) and axes.value is None):
        return ArrayV(tuple(reversed(array.shape)) if array.shape is not None else None, array.dtype)
    order = [as_int(a) for a in axes.items] if isinstance(axes, Seq) else None
    if order is None or any(i is None for i in order):
        return ArrayV(None, array.dtype)
    rank = len(order)
    if array.shape is not None and len(array.shape) != rank:
        return ArrayV(None, array.dtype)
    positions = [i % rank for i in order if i is not None and -rank <= i < rank]
    if sorted(positions) != list(range(rank)):
        return ArrayV(None, array.dtype)
    if array.shape is None:
        return ArrayV(_unknown_dims(rank, "a transposed array"), array.dtype)
    return ArrayV(tuple(array.shape[i] for i in positions), array.dtype)


@methods(ArrayV, "transpose")
def _transpose_method(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    """`x.transpose()`, `x.transpose(0, 2, 1, 3)` or `x.transpose((0, 2, 1, 3))`."""
    assert isinstance(method.base, ArrayV)
    if call.kwargs:
        return ArrayV(None, method.base.dtype)
    if not call.args:
        axes: Value | None = None
    elif len(call.args) == 1 and (isinstance(call.args[0], Seq) or as_int(call.args[0]) is None):
        axes = call.args[0]
    else:
        axes = Seq(tuple(call.args))
    return permuted(method.base, axes)


def swapped(array: ArrayV, one: Value | None, two: Value | None) -> ArrayV:
    if array.shape is None:
        return ArrayV(None, array.dtype)
    rank = len(array.shape)
    first, second = axis_of(one, rank), axis_of(two, rank)
    if first is None or second is None:
        return ArrayV(None, array.dtype)
    dims = list(array.shape)
    dims[first], dims[second] = dims[second], dims[first]
    return ArrayV(tuple(dims), array.dtype)


@methods(ArrayV, "swapaxes")
def _swapaxes_method(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    assert isinstance(method.base, ArrayV)
    return swapped(method.base, call.get(0, "axis1"), call.get(1, "axis2"))


@calls(*(f"{m}.swapaxes" for m in _MODULES))
def _swapaxes(call: CallArgs) -> Value | None:
    array = operand(call.get(0, "a"))
    return None if array is None else swapped(array, call.get(1, "axis1"), call.get(2, "axis2"))


@calls(*(f"{m}.moveaxis" for m in _MODULES))
def _moveaxis(call: CallArgs) -> Value | None:
    """`jnp.moveaxis(x, source, destination)`, with one axis or tuples of them."""
    array = operand(call.get(0, "a"))
    if array is None:
        return None
    if array.shape is None:
        return ArrayV(None, array.dtype)
    rank = len(array.shape)
    sources, targets = _axes_list(call.get(1, "source"), rank), _axes_list(call.get(2, "destination"), rank)
    if sources is None or targets is None or len(sources) != len(targets):
        return ArrayV(None, array.dtype)
    if len(set(sources)) != len(sources) or len(set(targets)) != len(targets):
        return ArrayV(None, array.dtype)
    order = [i for i in range(rank) if i not in sources]
    for target, source in sorted(zip(targets, sources, strict=True)):
        order.insert(target, source)
    return ArrayV(tuple(array.shape[i] for i in order), array.dtype)


def _axes_list(value: Value | None, rank: int) -> list[int] | None:
    items: Sequence[Value] = value.items if isinstance(value, Seq) else (value,) if value is not None else ()
    axes = [axis_of(item, rank) for item in items]
    return None if not axes or any(a is None for a in axes) else [a for a in axes if a is not None]


# -- flattening and squeezing ---------------------------------------------------------------------


@methods(ArrayV, "ravel", "flatten")
def _ravel_method(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    """`x.ravel()`, `x.flatten()`: one dimension, whatever the rank (`order=` keeps the size)."""
    assert isinstance(method.base, ArrayV)
    return ArrayV((flattened_size(method.base.shape),), method.base.dtype)


@calls(*(f"{m}.ravel" for m in _MODULES))
def _ravel(call: CallArgs) -> Value | None:
    array = operand(call.get(0, "a"))
    return None if array is None else ArrayV((flattened_size(array.shape),), array.dtype)


def squeezed(array: ArrayV, axis: Value | None) -> ArrayV:
    """Without `axis` every dimension of size 1 goes (all sizes must be known: an unknown one may
    be 1); with it, those axes go (JAX raises when a known size there is not 1)."""
    if array.shape is None:
        return ArrayV(None, array.dtype)
    if axis is None or (isinstance(axis, Const) and axis.value is None):
        sizes = [as_int(d) for d in array.shape]
        if any(size is None for size in sizes):
            return ArrayV(None, array.dtype)
        return ArrayV(tuple(d for d, size in zip(array.shape, sizes, strict=True) if size != 1), array.dtype)
    axes = _axes_list(axis, len(array.shape))
    if axes is None or len(set(axes)) != len(axes):
        return ArrayV(None, array.dtype)
    if any(as_int(array.shape[a]) not in (None, 1) for a in axes):
        return ArrayV(None, array.dtype)
    return ArrayV(tuple(d for i, d in enumerate(array.shape) if i not in axes), array.dtype)


@methods(ArrayV, "squeeze")
def _squeeze_method(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    assert isinstance(method.base, ArrayV)
    return squeezed(method.base, call.get(0, "axis"))


@calls(*(f"{m}.squeeze" for m in _MODULES))
def _squeeze(call: CallArgs) -> Value | None:
    array = operand(call.get(0, "a"))
    return None if array is None else squeezed(array, call.get(1, "axis"))


@calls(*(f"{m}.reshape" for m in _MODULES))
def _reshape(call: CallArgs) -> Value | None:
    """`jnp.reshape(x, shape)`, as `x.reshape(shape)`."""
    array = operand(call.get(0, "a"))
    shape = call.get(1, "shape", "newshape")
    if array is None or shape is None:
        return None
    return reshaped(array, [shape])


# -- same shape, or one more axis -----------------------------------------------------------------


@calls(*(f"{m}.{n}" for m in _MODULES for n in ("flip", "roll", "fliplr", "flipud")))
def _same_shape(call: CallArgs) -> Value | None:
    """`jnp.flip`, `jnp.roll` (without an axis it rolls the flattened array and reshapes it back)."""
    array = operand(call.get(0, "m", "a"))
    return None if array is None else ArrayV(array.shape, array.dtype)


@calls(*(f"{m}.{n}" for m in _MODULES for n in ("sort", "argsort")))
def _sort(call: CallArgs) -> Value | None:
    """`jnp.sort(x, axis=-1)` keeps the shape; `axis=None` flattens first. `argsort` gives int32."""
    array = operand(call.get(0, "a"))
    if array is None:
        return None
    dtype = _INT32 if call.qualname.endswith("argsort") else array.dtype
    axis = call.get(1, "axis")
    if isinstance(axis, Const) and axis.value is None:
        return ArrayV((flattened_size(array.shape),), dtype)
    if axis is not None and as_int(axis) is None:
        return ArrayV(None, dtype)
    return ArrayV(array.shape, dtype)


@calls("jax.lax.top_k")
def _top_k(call: CallArgs) -> Value | None:
    """`lax.top_k(x, k, axis=-1)`: the values (x's dtype) and their int32 indices, each x's shape
    with `k` along `axis` (jax-llm-examples' MoE routers, `topk_weights, topk_idx = ...`). An
    operand of unknown rank gives two arrays of unknown rank, and one JAX rejects (a `k` below 0
    or above the size, an axis out of range) two of no shape."""
    array = operand(call.get(0, "operand"))
    count = call.get(1, "k")
    if array is None or count is None:
        return None
    index = (
        axis_of(call.get(None, "axis") or Const(-1), len(array.shape)) if array.shape is not None else None
    )
    shape = None if array.shape is None or index is None else _top_k_shape(array.shape, index, count)
    return Seq((ArrayV(shape, array.dtype), ArrayV(shape, _INT32)))


def _top_k_shape(shape: Shape, index: int, count: Value) -> Shape | None:
    number, size = as_int(count), as_int(shape[index])
    if number is None:
        if not isinstance(count, Unknown):
            return None
    elif number < 0 or (size is not None and number > size):
        return None
    return (*shape[:index], count, *shape[index + 1 :])


@calls(*(f"{m}.take_along_axis" for m in _MODULES))
def _take_along_axis(call: CallArgs) -> Value | None:
    """`jnp.take_along_axis(x, indices, axis)`: `indices`' size along `axis`, the other sizes of
    the two broadcast (tunix's samplers, jax-llm-examples' routers gather logits and scores by
    index); `axis=None` takes from the flattened array by 1-D indices. Both arrays need one rank:
    JAX raises otherwise, so ranks that differ, sizes that do not broadcast or an axis out of range
    give no shape."""
    array, indices = operand(call.get(0, "arr")), operand(call.get(1, "indices"))
    axis = call.get(2, "axis")
    if array is None or indices is None or axis is None:
        return None
    return ArrayV(_taken_shape(array.shape, indices.shape, axis), array.dtype)


def _taken_shape(shape: Shape | None, indices: Shape | None, axis: Value) -> Shape | None:
    if isinstance(axis, Const) and axis.value is None:
        if indices is None:
            return (Unknown("the number of indices"),)
        return indices if len(indices) == 1 else None
    known = shape if shape is not None else indices
    index = axis_of(axis, len(known)) if known is not None else None
    if known is None or index is None:
        return None
    shape = shape if shape is not None else _unknown_dims(len(known), "the array")
    indices = indices if indices is not None else _unknown_dims(len(known), "the indices")
    if len(shape) != len(indices):
        return None
    others = broadcast((*shape[:index], *shape[index + 1 :]), (*indices[:index], *indices[index + 1 :]))
    return None if others is None else (*others[:index], indices[index], *others[index:])


@calls(*(f"{m}.{n}" for m in _MODULES for n in ("logical_not", "isnan", "isinf", "isfinite", "signbit")))
def _predicate(call: CallArgs) -> Value | None:
    """Elementwise tests: the same shape, boolean."""
    array = operand(call.get(0, "x"))
    return None if array is None else ArrayV(array.shape, _BOOL)


@calls("jax.nn.one_hot")
def _one_hot(call: CallArgs) -> Value | None:
    """`jax.nn.one_hot(x, n, axis=-1)`: a new axis of size `n` where `axis` says."""
    array = operand(call.get(0, "x"))
    classes = call.get(1, "num_classes")
    if array is None or classes is None:
        return None
    dtype = call.get(None, "dtype")
    kind = dtype_of(dtype, call.library.environment.x64) if dtype is not None else None
    result_dtype = kind or call.library.environment.default_dtype
    if array.shape is None:
        return ArrayV(None, result_dtype)
    axis = axis_of(call.get(None, "axis") or Const(-1), len(array.shape) + 1)
    if axis is None:
        return ArrayV(None, result_dtype)
    size = classes if as_int(classes) is not None else Unknown("the number of classes")
    return ArrayV((*array.shape[:axis], size, *array.shape[axis:]), result_dtype)
