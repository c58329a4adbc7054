"""Indexing: `x[...]` and `x.at[...].get(out_sharding=)` (`jnp.take` is in take.py).

jnp's `rewriting_take` tries three lowerings in turn, and which one runs decides the sharding:

1. a static `lax.slice` (integers, static slices, `None`, `...`), then
2. a `lax.dynamic_slice` (the same, steps of ±1 only, and traced scalar indices), then
3. a `gather` (integer arrays, strided slices next to a traced index).

The slice rules keep the operand's sharding and only require every sharded dimension whose size
changes to stay divisible by its mesh axes. The gather rule keeps a dimension's sharding only when
that dimension is taken whole, and rejects any sharded dimension it indexes into. The first two
are refused for a *concrete* array spread over several devices when the index takes a part of a
dimension (`NDIndexer.is_sharded` sees an `ArrayImpl`; a tracer inside `jit` never is one), so
the same `x[0:4]` is a slice inside `jit` and a gather eagerly.
"""

from __future__ import annotations

from shardls.core.spec import PartitionSpec
from shardls.core.typing.boolean_mask import check_boolean_indices
from shardls.core.typing.errors import ShapeError
from shardls.core.typing.gather import gather
from shardls.core.typing.index_entries import INDEX_ERROR, Entry, Index, is_scalar, parse_index
from shardls.core.typing.permute import expand_dims, squeeze
from shardls.core.typing.results import check_sharding
from shardls.core.typing.slicing import dynamic_slice, lax_slice
from shardls.core.typing.types import ShardedType


def index(
    x: ShardedType,
    indices: Index | tuple[Index, ...] | list[Index],
    *,
    concrete: bool = False,
    out_sharding: PartitionSpec | None = None,
) -> ShardedType:
    """`x[indices]`, or `x.at[indices].get(out_sharding=...)`.

    `concrete`: `x` is a concrete array (code outside `jax.jit`), so on a mesh of more than one
    device a partial index takes the gather path. `out_sharding` is used by the gather path only
    (a static slice ignores it, as JAX does)."""
    if out_sharding is not None:
        check_sharding(x.mesh, out_sharding, x.dtype)
    check_boolean_indices(indices, concrete=concrete)
    entries = parse_index(x, indices)
    refused = concrete and x.mesh.size != 1 and _partial(x, entries)
    if not refused:
        if _static_ok(x, entries):
            return _static(x, entries)
        if _dynamic_ok(entries):
            return _dynamic(x, entries)
    return gather(x, entries, out_sharding)


def _partial(x: ShardedType, entries: list[Entry]) -> bool:
    """`NDIndexer.has_partial_slices`: an integer, or a slice that is not the whole dimension
    (a traced scalar does not count: JAX lets it through to the dynamic slice)."""
    for e in entries:
        if isinstance(e.index, int):
            return True
        if isinstance(e.index, slice) and e.dim is not None:
            size = x.shape[e.dim]
            start, stop, step = e.index.indices(size)
            if abs(step) != 1 or abs(stop - start) != size:
                return True
    return False


def _check_integer_dims(x: ShardedType, entries: list[Entry]) -> None:
    """XLA cannot index into an empty dimension, whatever the path."""
    for e in entries:
        if is_scalar(e.index) and e.dim is not None and x.shape[e.dim] == 0:
            raise ShapeError(f"index is out of bounds for axis {e.dim} with size 0", INDEX_ERROR)


def _static_ok(x: ShardedType, entries: list[Entry]) -> bool:
    """`to_static_slice` accepts only static entries, integers in range and nonzero steps."""
    for e in entries:
        if isinstance(e.index, ShardedType):
            return False
        if isinstance(e.index, int) and e.dim is not None:
            size = x.shape[e.dim]
            if not 0 <= (e.index + size if e.index < 0 else e.index) < size:
                return False
        if isinstance(e.index, slice) and e.index.step == 0:
            return False
    return True


def _dynamic_ok(entries: list[Entry]) -> bool:
    """`to_dynamic_slice` accepts steps of ±1 and scalar (static or traced) indices only."""
    for e in entries:
        if isinstance(e.index, ShardedType) and e.index.rank:
            return False
        if isinstance(e.index, slice) and e.index.step not in (None, 1, -1):
            return False
    return True


def _finish(y: ShardedType, squeezed: list[int], newaxis: list[int]) -> ShardedType:
    """Squeeze the integer-indexed dimensions, then insert the `None` ones (`lax.expand_dims`)."""
    if squeezed:
        y = squeeze(y, squeezed)
    if newaxis:
        y = expand_dims(y, newaxis)
    return y


def _static(x: ShardedType, entries: list[Entry]) -> ShardedType:
    """`_static_slice`: one `lax.slice` (unless trivial), `rev`, `squeeze`, `expand_dims`."""
    _check_integer_dims(x, entries)
    start: list[int] = []
    limit: list[int] = []
    strides: list[int] = []
    squeezed: list[int] = []
    newaxis: list[int] = []
    for e in entries:
        if e.dim is None:
            newaxis.append(len(start) - len(squeezed) + len(newaxis))
            continue
        size = x.shape[e.dim]
        if isinstance(e.index, int):
            i = min(max(e.index + size if e.index < 0 else e.index, 0), size - 1)
            start.append(i)
            limit.append(i + 1)
            strides.append(1)
            squeezed.append(e.dim)
        else:
            assert isinstance(e.index, slice)
            first, stop, step = e.index.indices(size)
            if step < 0:
                new_start = min(size, stop + 1 + abs(first - stop - 1) % abs(step))
                start.append(new_start)
                limit.append(max(new_start, first + 1))
                strides.append(abs(step))
            else:
                start.append(first)
                limit.append(max(first, stop))
                strides.append(step)
    trivial = all(s == 1 for s in strides) and all(
        (a, b) == (0, n) for a, b, n in zip(start, limit, x.shape, strict=True)
    )
    y = x if trivial else lax_slice(x, start, limit, None if all(s == 1 for s in strides) else strides)
    return _finish(y, squeezed, newaxis)


def _dynamic(x: ShardedType, entries: list[Entry]) -> ShardedType:
    """`_dynamic_slice`: one `lax.dynamic_slice` (unless every entry is `:`), `rev`, `squeeze`,
    `expand_dims`."""
    _check_integer_dims(x, entries)
    sizes: list[int] = []
    squeezed: list[int] = []
    newaxis: list[int] = []
    trivial = True
    for e in entries:
        if e.dim is None:
            newaxis.append(len(sizes) - len(squeezed) + len(newaxis))
        elif is_scalar(e.index):
            trivial = False
            sizes.append(1)
            squeezed.append(e.dim)
        else:
            assert isinstance(e.index, slice)
            trivial = trivial and e.index == slice(None)
            first, stop, step = e.index.indices(x.shape[e.dim])
            if step < 0:
                new_start = stop + 1 + abs(first - stop - 1) % abs(step)
                sizes.append(max(0, first + 1 - new_start))
            else:
                sizes.append(max(0, stop - first))
    y = x if trivial else dynamic_slice(x, sizes)
    return _finish(y, squeezed, newaxis)
