"""The collectives of a `shard_map` body (`jax.lax.psum`, `all_gather`, `ppermute`, ...): the
only operations that change which Manual axes a value varies along (its vma).

Checked against JAX 0.10 (tests/core/test_manual_types.py):

- `psum`/`pmax`/`pmin`/`pmean` over axes reduce along them: the result no longer varies there
  (a value that did not vary there is summed with itself, and stays invariant). `psum`,
  `pmean`, `psum_scatter` and `pcast` need the value to vary along all of their axes or none
  (SH332).
- `all_gather`, `psum_scatter`, `ppermute`, `all_to_all` and `pcast(..., to='varying')` leave a
  value that varies along their axes (an invariant operand is cast with `pvary` first).
- `axis_index(axes)` is an `int32[]` that varies along `axes`.

Every axis must be a Manual axis of the body's mesh; otherwise JAX raises (a NameError, an
assertion) and shardls gives no type (ShapeError): these are not sharding-type errors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from shardls.core.mesh import Mesh
from shardls.core.typing.errors import VALUE_ERROR, ShapeError, reject
from shardls.core.typing.manual import NOT_MODELLED, manual_axes
from shardls.core.typing.promotion import FLOAT32, INT32, is_floating, is_integer
from shardls.core.typing.results import check_divisible
from shardls.core.typing.types import ShardedType, SpecAxes

REDUCING = ("psum", "pmax", "pmin", "pmean")
INDEX_ERROR = "IndexError"


def _axes(mesh: Mesh, names: Sequence[str]) -> frozenset[str]:
    manual = manual_axes(mesh)
    unbound = [n for n in names if n not in manual]
    if unbound:
        raise ShapeError(f"Found an unbound axis name: {unbound[0]}", "NameError")
    return frozenset(names)


def _size(mesh: Mesh, names: Sequence[str]) -> int:
    return math.prod(mesh.sizes_by_name[n] for n in names)


def reduce(name: str, x: ShardedType, axes: Sequence[str]) -> ShardedType:
    """`psum`/`pmax`/`pmin`/`pmean(x, axes)`: same shape, no longer varying along `axes`.
    `pmean` of an integer array divides into a float32."""
    if name not in REDUCING:
        raise ValueError(name)
    if x.unreduced or x.reduced:
        raise ShapeError("collectives of unreduced or reduced values", NOT_MODELLED)
    names = _axes(x.mesh, axes)
    if name in ("psum", "pmean"):
        _one_state(x, axes, "jax.lax.psum")
    if name == "pmean" and not is_floating(x.dtype):
        if not is_integer(x.dtype):
            raise ShapeError("pmean of a non-numeric array", NOT_MODELLED)
        # the sum divided by the axes' size: an integer mean is a float32 (x64 is not modelled)
        return replace(x, dtype=FLOAT32, weak_type=False, varying=x.varying - names)
    return replace(x, varying=x.varying - names)


def _one_state(x: ShardedType, axes: Sequence[str], name: str) -> None:
    """`psum` (and `pmean`, which is a psum), `psum_scatter` and `pcast` sum a varying value, or
    multiply an invariant one: the axes must all be of one kind for the input (`_get_from`)."""
    states = {"varying" if a in x.varying else "invarying" for a in axes}
    if len(states) > 1:
        shown = "{" + ", ".join(repr(s) for s in sorted(states)) + "}"
        raise reject(
            "SH332",
            f"{name} can only accept axis_name which corresponds to one of varying, unreduced, "
            f"reduced or invarying state of the input. Got input type: {x.jax_type}, axes: "
            f"{tuple(axes)!r} and input state: {shown}",
            VALUE_ERROR,
            varying=tuple(a for a in axes if a in x.varying),
            invariant=tuple(a for a in axes if a not in x.varying),
        )


def _varying(x: ShardedType, names: frozenset[str], shape: tuple[int, ...], spec: SpecAxes) -> ShardedType:
    """The result along `names` too; its dimensions must still divide by their Explicit axes."""
    if x.unreduced or x.reduced:
        raise ShapeError("collectives of unreduced or reduced values", NOT_MODELLED)
    check_divisible(x.mesh, shape, spec)
    return replace(x, shape=shape, spec=spec, varying=x.varying | names)


def ppermute(x: ShardedType, axes: Sequence[str]) -> ShardedType:
    """`ppermute(x, axes, perm)`: the same block, received from another device."""
    return _varying(x, _axes(x.mesh, axes), x.shape, x.spec)


def pcast_varying(x: ShardedType, axes: Sequence[str]) -> ShardedType:
    """`pcast(x, axes, to='varying')` (the old `pvary`); JAX refuses a value already varying along
    every one of them ("Unsupported pcast from=varying")."""
    names = _axes(x.mesh, axes)
    _one_state(x, axes, "jax.lax.pcast")
    if names and names <= x.varying:
        raise ShapeError("Unsupported pcast from=varying, to='varying'", VALUE_ERROR)
    return _varying(x, names, x.shape, x.spec)


def all_gather(x: ShardedType, axes: Sequence[str], axis: int = 0, *, tiled: bool = False) -> ShardedType:
    """`all_gather(x, axes, axis=, tiled=)`: a new dimension of the axes' size at `axis`, or
    (`tiled`) dimension `axis` that many times longer, its spec entry kept (as JAX keeps it)."""
    names = _axes(x.mesh, axes)
    size = _size(x.mesh, axes)
    rank = x.rank if tiled else x.rank + 1
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} is out of bounds for array of dimension {rank}", VALUE_ERROR)
    d = axis % rank
    if tiled:
        shape = x.shape[:d] + (x.shape[d] * size,) + x.shape[d + 1 :]
        return _varying(x, names, shape, x.spec)
    _no_explicit_axes(x, "all_gather")
    return _varying(x, names, x.shape[:d] + (size,) + x.shape[d:], x.spec[:d] + ((),) + x.spec[d:])


def _no_explicit_axes(x: ShardedType, name: str) -> None:
    """A collective that changes the rank keeps the operand's spec entry by entry in JAX 0.10
    (`aval.update(shape=...)`), so its Explicit axes land on other dimensions than their data:
    such a result gets no type."""
    if any(x.spec):
        raise ShapeError(f"an untiled {name} of an array split over Explicit axes", NOT_MODELLED)


def psum_scatter(
    x: ShardedType, axes: Sequence[str], scatter_dimension: int = 0, *, tiled: bool = False
) -> ShardedType:
    """`psum_scatter(x, axes, scatter_dimension=, tiled=)`: the sum, each device keeping one
    piece of dimension `scatter_dimension` (`tiled`: divided by the axes' size; untiled: that
    dimension, of exactly that size, removed)."""
    names = _axes(x.mesh, axes)
    _one_state(x, axes, "jax.lax.psum_scatter")
    size = _size(x.mesh, axes)
    d = scatter_dimension
    if not 0 <= d < x.rank:
        raise ShapeError("psum_scatter's dimension is out of range", INDEX_ERROR)
    if x.shape[d] % size if tiled else x.shape[d] != size:
        raise ShapeError("psum_scatter's dimension does not fit the axes' size", VALUE_ERROR)
    if tiled:
        return _varying(x, names, x.shape[:d] + (x.shape[d] // size,) + x.shape[d + 1 :], x.spec)
    _no_explicit_axes(x, "psum_scatter")
    return _varying(x, names, x.shape[:d] + x.shape[d + 1 :], x.spec[:d] + x.spec[d + 1 :])


def all_to_all(
    x: ShardedType, axes: Sequence[str], split_axis: int, concat_axis: int, *, tiled: bool = False
) -> ShardedType:
    """`all_to_all(x, axes, split_axis, concat_axis, tiled=)`: dimension `split_axis` split over
    the devices, the pieces received stacked along `concat_axis` (tiled: divided and multiplied;
    untiled: `split_axis`, of exactly the axes' size, moved to `concat_axis`)."""
    names = _axes(x.mesh, axes)
    size = _size(x.mesh, axes)
    s, c = split_axis, concat_axis
    if not (0 <= s < x.rank and 0 <= c < x.rank):
        raise ShapeError("all_to_all's axes are out of range", INDEX_ERROR)
    if tiled:
        if x.shape[s] % size:
            raise ShapeError(
                f"The size of all_to_all split_axis ({x.shape[s]}) has to be divisible by the size of "
                "the named axis",
                VALUE_ERROR,
            )
        shape = list(x.shape)
        shape[s] //= size
        shape[c] *= size
        return _varying(x, names, tuple(shape), x.spec)
    if x.shape[s] != size:
        raise ShapeError(
            "all_to_all requires the size of the mapped axis to equal x.shape[split_axis]", VALUE_ERROR
        )
    _no_explicit_axes(x, "all_to_all")
    rest = x.shape[:s] + x.shape[s + 1 :]
    rest_spec = x.spec[:s] + x.spec[s + 1 :]
    return _varying(x, names, rest[:c] + (size,) + rest[c:], rest_spec[:c] + ((),) + rest_spec[c:])


def axis_index(mesh: Mesh, axes: Sequence[str]) -> ShardedType:
    """`axis_index(axes)`: this device's position along `axes`, an `int32[]` varying along them."""
    names = _axes(mesh, axes)
    return ShardedType((), INT32, mesh, (), varying=names)
