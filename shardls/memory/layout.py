"""From a parameter as written to its layout: stacking, logical rules, then the core calculator.

The order is Flax's: `nnx.vmap` adds the stacked axis to the value (and, with
`transform_metadata`, an entry to the annotation), then the logical rules in effect rename the
annotation's names, then the value is laid out on the mesh (`nnx.get_partition_spec` semantics).
"""

from __future__ import annotations

from dataclasses import dataclass

from shardls.analysis.logical import Rules, nnx_translate
from shardls.analysis.recognizers.nnx.param_layout import spec_options
from shardls.analysis.recognizers.nnx.stacking import insert_spec_entry
from shardls.analysis.values import SpecV, Unknown, Value, as_int
from shardls.core import DType, Mesh, PartitionSpec, UsageContext, compute_layout
from shardls.memory.model import Dim, ParamMemory
from shardls.memory.raw_param import RawParam


@dataclass(frozen=True)
class Placement:
    """What every parameter of one model is laid out with."""

    mesh: Mesh | None
    rules: Rules | None
    default_dtype: DType
    """For layers that do not write `param_dtype` (Flax: float32; `--dtype` can say otherwise)."""


def lay_out(raw: RawParam, placement: Placement) -> tuple[ParamMemory, tuple[str, ...]]:
    """The parameter with its layout, and notes on whatever could not be decided."""
    notes: list[str] = []
    shape = raw.shape
    spec = _written_spec(raw)
    for level in reversed(raw.levels):
        if shape is not None:
            shape = (*shape[: level.axis], level.size, *shape[level.axis :])
        if level.has_metadata and spec is not None:
            spec = insert_spec_entry(spec, level.axis, level.partition)
    dims = _dims(shape, raw.path, notes)
    dtype = raw.dtype or placement.default_dtype
    final, logical = _translated(spec, raw, placement, notes)
    shard_shape = dims
    if placement.mesh is not None and not any(isinstance(d, str) for d in dims):
        layout = compute_layout(
            placement.mesh, final or PartitionSpec(()), tuple(int(d) for d in dims), dtype, UsageContext.PARAM
        )
        if layout.shard_shape is None:
            problem = layout.problems[0].message if layout.problems else "rejected"
            notes.append(f"{raw.path}: JAX rejects this layout ({problem}); counted as unsharded")
        else:
            shard_shape = layout.shard_shape
    param = ParamMemory(
        raw.path, dims, dtype, final, shard_shape, raw.where.count, raw.line, logical, raw.where
    )
    return param, tuple(notes)


def _written_spec(raw: RawParam) -> SpecV | None:
    if raw.annotation is None:
        return None
    return next((spec for spec, _ in spec_options(raw.annotation)), None)


def _translated(
    spec: SpecV | None, raw: RawParam, placement: Placement, notes: list[str]
) -> tuple[PartitionSpec | None, PartitionSpec | None]:
    """The spec in mesh axes (created-sharded values skip Flax's rules), and the spec as written
    when rules renamed it."""
    if spec is None:
        return None, None
    if spec.unknown_entries:
        notes.append(f"{raw.path}: spec entries {list(spec.unknown_entries)} are not known; taken as None")
    annotation = raw.annotation
    if annotation is None or annotation.created_sharded:
        return spec.spec, None
    axes = placement.mesh.axis_names if placement.mesh is not None else None
    translation = nnx_translate(spec.spec, placement.rules, annotation.rules, axes)
    renamed = translation.logical if translation.logical != translation.spec else None
    return translation.spec, renamed


def _dims(shape: tuple[Value, ...] | None, path: str, notes: list[str]) -> tuple[Dim, ...]:
    if shape is None:
        notes.append(f"{path}: the rank is not known; not counted")
        return ("?",)
    dims: list[Dim] = []
    for value in shape:
        size = as_int(value)
        if size is None:
            dims.append(value.symbol or "?" if isinstance(value, Unknown) else "?")
        else:
            dims.append(size)
    if any(isinstance(d, str) for d in dims):
        notes.append(
            f"{path}: dimensions {', '.join(str(d) for d in dims if isinstance(d, str))} are symbolic; not counted"
        )
    return tuple(dims)
