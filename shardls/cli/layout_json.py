"""`shardls layout --json`: a stable, documented object for scripts.

Keys are always present; values computed from the layout are null when there is no layout (the
mesh itself is broken) and `shard_shape`, `bytes_per_device`, `total_bytes` and
`per_device_type` are null when JAX rejects the layout. `devices` is present only for a valid
layout on a mesh of at most MAX_JSON_DEVICES devices.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shardls.core.context import UsageContext
from shardls.core.dtypes import DType
from shardls.core.layout import Layout
from shardls.core.mesh import Mesh
from shardls.core.problems import Problem
from shardls.core.spec import PartitionSpec
from shardls.render.layout_text import rule_name

MAX_JSON_DEVICES = 4096
"""Above this the per-device list would dwarf everything else in the output."""


@dataclass(frozen=True)
class LayoutRequest:
    """What the user asked about, known even when the mesh is too broken to lay anything out."""

    mesh: Mesh
    spec: PartitionSpec
    global_shape: tuple[int, ...]
    dtype: DType
    context: UsageContext


def _optional_list(shape: tuple[int, ...] | None) -> list[int] | None:
    return None if shape is None else list(shape)


_COMPUTED: dict[str, Callable[[Layout], object]] = {
    "shard_shape": lambda layout: _optional_list(layout.shard_shape),
    "num_distinct_shards": lambda layout: layout.num_distinct_shards,
    "copies": lambda layout: layout.copies,
    "bytes_per_device": lambda layout: layout.bytes_per_device,
    "total_bytes": lambda layout: layout.total_bytes,
    "jax_type": lambda layout: layout.jax_type,
    "per_device_type": lambda layout: layout.per_device_type,
    "padded": lambda layout: layout.padded,
}
"""The keys that need a layout, with how to read each from one (a single list keeps them in step)."""


def layout_json(
    request: LayoutRequest, layout: Layout | None, problems: Sequence[Problem]
) -> dict[str, object]:
    mesh = request.mesh
    out: dict[str, object] = {
        "global_shape": list(request.global_shape),
        "dtype": request.dtype.name,
        "mesh": dict(zip(mesh.axis_names, mesh.axis_sizes, strict=True)),
        "axis_types": {name: t.value for name, t in zip(mesh.axis_names, mesh.axis_types, strict=True)},
        "spec": request.spec.to_json(),
        "unreduced": sorted(request.spec.unreduced),
        "reduced": sorted(request.spec.reduced),
        "context": request.context.value,
        **{key: None if layout is None else read(layout) for key, read in _COMPUTED.items()},
        "problems": [problem_json(problem) for problem in problems],
    }
    if layout is not None and layout.is_valid and mesh.size <= MAX_JSON_DEVICES:
        out["devices"] = [
            {
                "device": block.device_id,
                "coords": list(block.coords),
                "index": [None if span is None else list(span) for span in block.index],
                "replica_id": block.replica_id,
            }
            for block in layout.device_blocks()
        ]
    return out


def problem_json(problem: Problem) -> dict[str, object]:
    return {
        "code": problem.code,
        "name": rule_name(problem.code),
        "severity": problem.severity.value,
        "message": problem.message,
        "data": dict(problem.data),
    }
