"""Collectives that change a block's shape inside a `shard_map` body: `all_to_all`, `all_gather`,
`psum_scatter`, and those that keep it (`psum`, `pmax`, ..., the casts `pcast`, `pvary`). An
operand of several possible values is handed over one option at a time (`_SHAPE_MODULES`: the
MoE's `ff_out_expert` is one of two branches' before its `psum`).

The size of the axes a collective runs over is read from the body's mesh (the shard_map
recognizer evaluates the body with it as the context mesh, its manual axes Manual). Where that
mesh is not known, the dimension the collective scales stays unknown, but the rank (and every
other size) is exact, which is what the `shard_map`'s output site needs to say which dims its
`out_specs` split.
"""

from __future__ import annotations

from shardls.analysis.library import CallArgs
from shardls.analysis.library.registry import calls
from shardls.analysis.values import ArrayV, Const, MeshV, Origin, Seq, Unknown, Value, as_int, as_str
from shardls.core import AxisType


def _axis_names(call: CallArgs) -> tuple[str, ...] | None:
    name = call.get(1, "axis_name")
    names = name.items if isinstance(name, Seq) else (name,) if name is not None else ()
    texts = tuple(as_str(n) for n in names)
    if not texts or any(t is None for t in texts):
        return None
    return tuple(t for t in texts if t is not None)


def _axis_size(call: CallArgs, names: tuple[str, ...] | None) -> Value:
    """The size of the axes the collective runs over, from the body's mesh when every one is a
    manual axis of it (else unknown: outside a shard_map body an axis name means something else)."""
    label = ", ".join(names) if names else "?"
    mesh = call.evaluator.context_mesh
    if names and isinstance(mesh, MeshV):
        types, sizes = mesh.mesh.types_by_name, mesh.mesh.sizes_by_name
        if all(types.get(n) is AxisType.MANUAL and isinstance(sizes.get(n), int) for n in names):
            total = 1
            for name in names:
                total *= sizes[name]
            assumption = "; ".join(mesh.assumptions) or None
            return Const(total, origin=Origin(f"size of mesh axis {label}", assumption=assumption))
    return Unknown(f"the size of mesh axis {label} (the body's mesh is not known)")


def _times(size: Value, factor: Value, divide: bool = False) -> Value:
    number, by = as_int(size), as_int(factor)
    if number is None or by is None or (divide and (by == 0 or number % by)):
        reason = "a size over" if divide else "a size times"
        return Unknown(f"{reason} the size of a mesh axis")
    return Const(number // by if divide else number * by, origin=factor.origin)


def _flag(call: CallArgs, name: str) -> bool | None:
    value = call.get(None, name)
    if value is None:
        return False
    return value.value if isinstance(value, Const) and isinstance(value.value, bool) else None


def _dim(call: CallArgs, name: str, position: int | None, rank: int) -> int | None:
    """A dimension argument, normalised; keyword-only ones default to 0 (JAX's default)."""
    value = call.get(position, name)
    if value is None and position is not None:
        return None  # a required argument left out: JAX raises
    index = as_int(value) if value is not None else 0
    if index is None or not -rank <= index < rank:
        return None
    return index % rank


def _operand(call: CallArgs) -> tuple[ArrayV, tuple[Value, ...]] | None:
    array = call.get(0, "x")
    if not isinstance(array, ArrayV) or array.shape is None:
        return None
    return array, array.shape


@calls("jax.lax.all_to_all")
def _all_to_all(call: CallArgs) -> Value | None:
    """`all_to_all(x, axis, split_axis, concat_axis, tiled=...)`: the rank is kept; the split
    and concatenated dims change by the axis size (untiled: the split dim moves to `concat_axis`)."""
    found = _operand(call)
    tiled = _flag(call, "tiled")
    if found is None or tiled is None:
        return None
    array, shape = found
    split = _dim(call, "split_axis", 2, len(shape))
    concat = _dim(call, "concat_axis", 3, len(shape))
    if split is None or concat is None:
        return ArrayV(None, array.dtype)
    dims = list(shape)
    if tiled:
        size = _axis_size(call, _axis_names(call))
        dims[split] = _times(dims[split], size, divide=True)
        dims[concat] = _times(dims[concat], size)
        return ArrayV(tuple(dims), array.dtype)
    moved = dims.pop(split)
    dims.insert(concat, moved)
    return ArrayV(tuple(dims), array.dtype)


@calls("jax.lax.all_gather")
def _all_gather(call: CallArgs) -> Value | None:
    """`all_gather(x, axis_name, axis=0, tiled=...)`: tiled, dim `axis` grows by the axis size;
    untiled, a new dim of that size is inserted at `axis`."""
    found = _operand(call)
    tiled = _flag(call, "tiled")
    if found is None or tiled is None:
        return None
    array, shape = found
    axis = _dim(call, "axis", None, len(shape) if tiled else len(shape) + 1)
    if axis is None:
        return ArrayV(None, array.dtype)
    dims = list(shape)
    size = _axis_size(call, _axis_names(call))
    if tiled:
        dims[axis] = _times(dims[axis], size)
    else:
        dims.insert(axis, size)
    return ArrayV(tuple(dims), array.dtype)


@calls("jax.lax.psum_scatter")
def _psum_scatter(call: CallArgs) -> Value | None:
    """`psum_scatter(x, axis_name, scatter_dimension=0, tiled=...)`: tiled, that dim shrinks by
    the axis size; untiled, it is removed (its size must be the axis size)."""
    found = _operand(call)
    tiled = _flag(call, "tiled")
    if found is None or tiled is None:
        return None
    array, shape = found
    axis = _dim(call, "scatter_dimension", None, len(shape))
    if axis is None:
        return ArrayV(None, array.dtype)
    dims = list(shape)
    if tiled:
        dims[axis] = _times(dims[axis], _axis_size(call, _axis_names(call)), divide=True)
    else:
        dims.pop(axis)
    return ArrayV(tuple(dims), array.dtype)


@calls("jax.lax.psum", "jax.lax.pmean", "jax.lax.pmax", "jax.lax.pmin", "jax.lax.ppermute")
def _collective(call: CallArgs) -> Value | None:
    """Collectives over mesh axes keep the shape of their operand (common in shard_map bodies)."""
    operand = call.get(0, "x")
    return operand if isinstance(operand, ArrayV) else None


@calls("jax.lax.pcast", "jax.lax.pvary")
def _cast(call: CallArgs) -> Value | None:
    """Casts between varying/reduced types keep the block as it is."""
    operand = call.get(0, "x")
    return operand if isinstance(operand, ArrayV) else None
