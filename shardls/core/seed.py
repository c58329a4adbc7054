"""`partition_spec_layout`: the original one-line question shardls answers, kept as a stable API.

It is the column sharding of an `nnx.Linear` kernel over one `model` axis, computed through the
general calculator so that it can never disagree with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, SupportsInt

from shardls.core.context import UsageContext
from shardls.core.layout import compute_layout
from shardls.core.mesh import AxisType, Mesh
from shardls.core.spec import PartitionSpec

if TYPE_CHECKING:
    import numpy as np

_COLUMN_SPEC = PartitionSpec.of(None, "model")


def partition_spec_layout(
    num_devices: SupportsInt, kernel_in: SupportsInt, kernel_out: SupportsInt
) -> np.ndarray:
    """Per-device shape `[kernel_in, kernel_out // num_devices]` of a column-sharded kernel, as floats.

    Inputs may be any int-like (numpy integers, `4.0`). Nothing is allocated and no device exists:
    the answer comes from the mesh `{model: num_devices}` and `P(None, "model")`. When
    `kernel_out` is not divisible the calculator reports a problem, and the floor division
    the signature promises is still returned.
    """
    import numpy as np  # lazily: the language server must start without numpy

    devices, rows, cols = int(num_devices), int(kernel_in), int(kernel_out)
    if devices < 1:
        raise ValueError(f"num_devices must be at least 1, got {devices}")
    if rows < 0 or cols < 0:
        raise ValueError(f"kernel dimensions must be non-negative, got ({rows}, {cols})")
    mesh = Mesh(("model",), (devices,), (AxisType.AUTO,))
    layout = compute_layout(mesh, _COLUMN_SPEC, (rows, cols), context=UsageContext.PARAM)
    shard = layout.shard_shape or tuple(
        n // f for n, f in zip(layout.global_shape, layout.dim_factors, strict=True)
    )
    return np.array(shard, dtype=np.float64)
