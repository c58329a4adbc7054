"""Exact data movement between two layouts of one array: the bytes each device must receive.

A `reshard`, `with_sharding_constraint` or `device_put` from one known layout to another ends with
every destination device holding its destination block. Whatever part of that block the device
already held in the source layout stays where it is; everything else has to arrive. Both layouts
are maps from device id to a box of global indices (`Layout.device_blocks`, in JAX's device
order, the same boxes as `NamedSharding.devices_indices_map`), so the part already present is one
box intersection per device: the figure is counted, not estimated.

It is the data that must arrive, which no schedule can avoid. XLA's collectives can move more
than that (an all-gather followed by a slice, say), and who sends each piece is theirs to choose;
neither changes what each device is missing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from shardls.core.layout import DeviceBlock, Layout


class MovementRefused(ValueError):
    """The two layouts do not describe one array moving between devices, or the block maps do
    not say what each device holds; the message says which."""


@dataclass(frozen=True)
class DeviceInflow:
    """What one destination device receives: the elements of its destination block it lacks."""

    device_id: int
    elements: int
    bytes: int


@dataclass(frozen=True)
class DataMovement:
    """The bytes each device must receive to go from one layout to another."""

    per_device: tuple[DeviceInflow, ...]
    """One entry per device of the destination mesh, in its mesh order (`mesh.devices.flat`)."""
    max_bytes: int
    """The most any one device receives: the step that bounds the time of the move."""
    total_bytes: int
    """The sum over the destination devices."""

    @property
    def moves_nothing(self) -> bool:
        return self.total_bytes == 0

    @property
    def receiving_devices(self) -> int:
        return sum(1 for device in self.per_device if device.elements)

    @property
    def is_uniform(self) -> bool:
        """Every destination device receives the same number of bytes."""
        return len({device.bytes for device in self.per_device}) <= 1


def data_movement(source: Layout, destination: Layout) -> DataMovement:
    """The exact per-device inflow of moving an array from `source` to `destination`.

    The meshes may differ (shape, axis names, device order, even which devices they cover): a
    destination device the source mesh does not include holds nothing yet and receives its whole
    block. Raises `MovementRefused` when the layouts differ in global shape or dtype (then they are
    not one array), when either is invalid (JAX rejects it, so there is no block map), when either
    has unreduced axes (each device holds partial sums, so the move is a reduction, whose traffic
    depends on the collective's algorithm; JAX's own `devices_indices_map` refuses them too), or
    when a mesh lists a device twice. Reduced axes hold whole copies and are moved like replicas.
    """
    _check_movable(source, destination)
    held = _blocks_by_device(source, "source")
    shape = destination.global_shape
    dtype = destination.dtype
    inflows = []
    for block in _unique_blocks(destination, "destination"):
        wanted = _box(block, shape)
        size = math.prod(stop - start for start, stop in wanted)
        present = held.get(block.device_id)
        kept = 0 if present is None else _overlap(wanted, _box(present, shape))
        missing = size - kept
        inflows.append(DeviceInflow(block.device_id, missing, dtype.bytes_for(missing)))
    return DataMovement(
        tuple(inflows),
        max((inflow.bytes for inflow in inflows), default=0),
        sum(inflow.bytes for inflow in inflows),
    )


def _check_movable(source: Layout, destination: Layout) -> None:
    if source.global_shape != destination.global_shape:
        raise MovementRefused(
            f"the layouts are of different arrays: shape {source.global_shape} and {destination.global_shape}"
        )
    if source.dtype.name != destination.dtype.name:
        raise MovementRefused(
            f"the layouts are of different arrays: dtype {source.dtype.name} and {destination.dtype.name}"
        )
    for role, layout in (("source", source), ("destination", destination)):
        if not layout.is_valid:
            raise MovementRefused(f"JAX rejects the {role} layout {layout.spec.display()}: it has no blocks")
        if layout.spec.unreduced:
            axes = ", ".join(sorted(layout.spec.unreduced))
            raise MovementRefused(
                f"the {role} layout is unreduced over {axes}: its devices hold partial sums, and "
                "reducing them moves as much as the collective's algorithm does"
            )


def _unique_blocks(layout: Layout, role: str) -> list[DeviceBlock]:
    blocks = layout.device_blocks()
    if len({block.device_id for block in blocks}) != len(blocks):
        raise MovementRefused(f"the {role} mesh lists a device more than once")
    return blocks


def _blocks_by_device(layout: Layout, role: str) -> dict[int, DeviceBlock]:
    return {block.device_id: block for block in _unique_blocks(layout, role)}


Box = tuple[tuple[int, int], ...]


def _box(block: DeviceBlock, shape: tuple[int, ...]) -> Box:
    """The block as half-open (start, stop) ranges on every dimension (None is the whole one)."""
    return tuple((0, n) if index is None else index for index, n in zip(block.index, shape, strict=True))


def _overlap(a: Box, b: Box) -> int:
    return math.prod(
        max(0, min(a_stop, b_stop) - max(a_start, b_start))
        for (a_start, a_stop), (b_start, b_stop) in zip(a, b, strict=True)
    )
