"""Types through `jax.vmap` on a mesh with Explicit axes (`vmap_f` in JAX's api.py, checked
against JAX 0.10 in tests/core/test_manual_types.py).

The mapped dimension of every mapped argument must be split over the same mesh axes (the
*explicit mesh axis* of the vmap, possibly none), and no unmapped argument may be split over
them. Inside the body each mapped argument has that dimension removed and keeps the rest of
its sharding. Each output gets the dimension back at `out_axes`, split over those axes again
(an output that does not depend on the mapped arguments is broadcast with the same
sharding). `spmd_axis_name` adds nothing to the type; JAX only requires it to name exactly the
mapped dimension's axes when that dimension is split.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from shardls.core.typing.errors import VALUE_ERROR, ShapeError, reject
from shardls.core.typing.results import short
from shardls.core.typing.types import DimAxes, ShardedType


@dataclass(frozen=True)
class Mapping:
    """What a vmap call maps: the size of the mapped dimension and the axes splitting it."""

    size: int
    axes: DimAxes


def _axes_text(axes: DimAxes | None) -> str:
    """How JAX prints one spec entry in these messages: `X`, `('X', 'Y')`, `None`."""
    if not axes:
        return "None"
    return axes[0] if len(axes) == 1 else repr(axes)


def mapping(
    arguments: Sequence[tuple[ShardedType, int | None]], spmd_axis_name: tuple[str, ...] | None = None
) -> Mapping:
    """The mapping of a call with these (type, in_axis) arguments, or why JAX refuses it: mapped
    dimensions split differently (SH333), an unmapped argument split over the mapped axes
    (SH334), `spmd_axis_name` naming other axes than the split mapped dimension (SH335)."""
    found: DimAxes | None = None
    size: int | None = None
    for t, in_axis in arguments:
        if in_axis is None:
            continue
        dim = _dimension(t, in_axis)
        if size is not None and t.shape[dim] != size:
            raise ShapeError("vmap got inconsistent sizes for the array axes to be mapped", VALUE_ERROR)
        size = t.shape[dim]
        axes = t.spec[dim]
        if found is not None and axes != found:
            raise reject(
                "SH333",
                "Mapped away dimension of inputs passed to vmap should be sharded the same. Got "
                f"inconsistent axis specs: {_axes_text(found)} vs {_axes_text(axes)}",
                VALUE_ERROR,
            )
        found = axes
    if size is None or found is None:
        raise ShapeError("vmap with no mapped argument", VALUE_ERROR)
    if found:
        for t, in_axis in arguments:
            split = {a for dim in t.spec for a in dim}
            if in_axis is None and split & set(found):
                raise reject(
                    "SH334",
                    "Unmapped values passed to vmap cannot be sharded along the mesh axis you are "
                    f"vmapping over. Got type: {short(t)}, in_axes: None and vmapped mesh axis: {found!r}",
                    VALUE_ERROR,
                )
        if spmd_axis_name is not None and tuple(spmd_axis_name) != found:
            raise reject(
                "SH335",
                "Only one of spmd_axis_name or arrays sharded on `Explicit` mesh axis type is allowed. "
                f"Got spmd_axis_name={tuple(spmd_axis_name)!r} and arrays sharded on "
                f"explicit_mesh_axis={found!r}",
                VALUE_ERROR,
            )
    return Mapping(size, found)


def _dimension(t: ShardedType, axis: int) -> int:
    if not -t.rank <= axis < t.rank:
        raise ShapeError(f"vmap in_axes {axis} is out of range for rank {t.rank}", VALUE_ERROR)
    return axis % t.rank


def element(t: ShardedType, in_axis: int | None) -> ShardedType:
    """A mapped argument inside the body: the mapped dimension removed."""
    if in_axis is None:
        return t
    d = _dimension(t, in_axis)
    return replace(t, shape=t.shape[:d] + t.shape[d + 1 :], spec=t.spec[:d] + t.spec[d + 1 :])


def batched(t: ShardedType, mapped: Mapping, out_axis: int) -> ShardedType:
    """An output of the body outside: the mapped dimension back at `out_axis`. (`out_axes=None`
    is allowed only for an output that does not depend on the mapped arguments, which the types
    alone do not tell: the caller gives those no type.)"""
    if not -(t.rank + 1) <= out_axis <= t.rank:
        raise ShapeError(f"vmap out_axes {out_axis} is out of range for rank {t.rank + 1}", VALUE_ERROR)
    d = out_axis % (t.rank + 1)
    if set(mapped.axes) & {a for dim in t.spec for a in dim}:
        raise ShapeError("the body's output is split over the mapped axes", "DuplicateSpecError")
    return replace(
        t,
        shape=t.shape[:d] + (mapped.size,) + t.shape[d:],
        spec=t.spec[:d] + (mapped.axes,) + t.spec[d:],
    )
