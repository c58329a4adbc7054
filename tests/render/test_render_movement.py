"""The hover's data-movement line, from real `data_movement` results."""

from __future__ import annotations

import pytest

from shardls.core import AxisType, Mesh, PartitionSpec, compute_layout, parse_dtype
from shardls.core.movement import DataMovement, data_movement
from shardls.render.movement import movement_text

XY = Mesh(("X", "Y"), (2, 4), (AxisType.EXPLICIT,) * 2)
X8 = Mesh(("X",), (8,), (AxisType.EXPLICIT,))
HALF = Mesh(("X",), (4,), (AxisType.EXPLICIT,), device_ids=(0, 1, 2, 3))


def text(
    source: tuple[Mesh, PartitionSpec], destination: tuple[Mesh, PartitionSpec], shape: tuple[int, ...]
) -> str:
    dtype = parse_dtype("float32")
    return movement_text(
        data_movement(compute_layout(*source, shape, dtype), compute_layout(*destination, shape, dtype))
    )


@pytest.mark.parametrize(
    ("source", "destination", "shape", "expected"),
    [
        ((XY, PartitionSpec.of()), (XY, PartitionSpec.of("X", "Y")), (1024, 1024), "moves nothing"),
        # 4 MiB sharded 8 ways, then replicated: 7/8 of it arrives on every device
        (
            (XY, PartitionSpec.of("X", "Y")),
            (XY, PartitionSpec.of()),
            (1024, 1024),
            "moves 3.5 MiB into each device",
        ),
        (
            (HALF, PartitionSpec.of()),
            (X8, PartitionSpec.of("X")),
            (1024, 1024),
            "moves 512.0 KiB into each of 4 of the 8 devices",
        ),
        (
            (HALF, PartitionSpec.of("X")),
            (X8, PartitionSpec.of()),
            (1024, 1024),
            "moves up to 4.0 MiB into a device, 28.0 MiB in all",
        ),
        (
            (Mesh(("X",), (1,), (AxisType.EXPLICIT,), device_ids=(3,)), PartitionSpec.of()),
            (Mesh(("X",), (1,), (AxisType.EXPLICIT,), device_ids=(5,)), PartitionSpec.of()),
            (16,),
            "moves 64 B into the device",
        ),
    ],
)
def test_movement_line(
    source: tuple[Mesh, PartitionSpec],
    destination: tuple[Mesh, PartitionSpec],
    shape: tuple[int, ...],
    expected: str,
) -> None:
    assert text(source, destination, shape) == expected


def test_uneven_inflow_to_some_devices_names_how_many_receive() -> None:
    """(A pattern that takes unequal blocks on partly overlapping meshes; written out directly.)"""
    movement = DataMovement((0, 1, 2), (0, 256, 512), (0, 1024, 2048), 2048, 3072)
    expected = "moves up to 2.0 KiB into a device, 3.0 KiB in all (2 of the 3 devices receive)"
    assert movement_text(movement) == expected
