"""Exact data movement between two layouts of one array: the bytes each device must receive.

A `reshard`, `with_sharding_constraint` or `device_put` from one known layout to another ends with
every destination device holding its destination block. Whatever part of that block the device
already held in the source layout stays where it is; everything else has to arrive. Both layouts
are maps from device id to a box of global indices (`Layout.dimension_ranges`, in JAX's device
order, the same boxes as `NamedSharding.devices_indices_map`), so the part already present is one
box intersection per device: the figure is counted, not estimated.

It is the data that must arrive, which no schedule can avoid. XLA's collectives can move more
than that (an all-gather followed by a slice, say), and who sends each piece is theirs to choose;
neither changes what each device is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from shardls.core.layout import Layout


class MovementRefused(ValueError):
    """The two layouts do not describe one array moving between devices, or the block maps do
    not say what each device holds; the message says which."""


@dataclass(frozen=True)
class DataMovement:
    """The bytes each device must receive to go from one layout to another.

    Per-device figures are parallel tuples (not an object per device): meshes of tens of
    thousands of devices are computed for a hover."""

    device_ids: tuple[int, ...]
    """The destination mesh's devices, in its mesh order (`mesh.devices.flat`)."""
    received_elements: tuple[int, ...]
    """Per device of `device_ids`, the elements of its destination block it did not hold."""
    received_bytes: tuple[int, ...]
    """The same in bytes (sub-byte dtypes packed, rounded up to whole bytes per device)."""
    max_bytes: int
    """The most any one device receives: the step that bounds the time of the move."""
    total_bytes: int
    """The sum over the destination devices."""

    @property
    def moves_nothing(self) -> bool:
        return self.total_bytes == 0

    @property
    def receiving_devices(self) -> int:
        return sum(1 for elements in self.received_elements if elements)

    @property
    def is_uniform(self) -> bool:
        """Every destination device receives the same number of bytes."""
        return len(set(self.received_bytes)) <= 1


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
    held = {device: flat for flat, device in enumerate(_device_ids(source, "source"))}
    devices = _device_ids(destination, "destination")
    # Column-wise, one dimension at a time over every device: per-device loops are too slow on
    # meshes of tens of thousands of devices. A device the source lacks holds the empty range.
    where = [held.get(device) for device in devices]
    wanted = [1] * len(devices)
    kept = [0 if flat is None else 1 for flat in where]
    for want, have in zip(_columns(destination), _columns(source), strict=True):
        pairs = list(zip(want, [_NOTHING if flat is None else have[flat] for flat in where], strict=True))
        # A dimension has few distinct blocks, so few distinct pairs: measure each pair once.
        overlap = {pair: _overlap(*pair) for pair in set(pairs)}
        wanted = [w * (stop - start) for w, (start, stop) in zip(wanted, want, strict=True)]
        kept = [k * overlap[pair] for k, pair in zip(kept, pairs, strict=True)]
    elements = tuple(w - k for w, k in zip(wanted, kept, strict=True))
    sizes = {n: destination.dtype.bytes_for(n) for n in set(elements)}
    received = tuple(sizes[n] for n in elements)
    return DataMovement(devices, elements, received, max(received, default=0), sum(received))


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


def _device_ids(layout: Layout, role: str) -> tuple[int, ...]:
    mesh = layout.mesh
    ids = tuple(range(mesh.size)) if mesh.device_ids is None else mesh.device_ids
    if len(ids) != mesh.size:
        raise MovementRefused(f"the {role} mesh lists {len(ids)} devices for its {mesh.size} positions")
    if len(set(ids)) != len(ids):
        raise MovementRefused(f"the {role} mesh lists a device more than once")
    return ids


_NOTHING = (0, 0)
"""The range a device outside the source mesh holds along every dimension."""


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def _columns(layout: Layout) -> list[Sequence[tuple[int, int]]]:
    """Per dimension, every device's `(start, stop)` along it, in mesh order."""
    count = layout.mesh.size
    return [
        ((0, n),) * count if along is None else along
        for along, n in zip(layout.dimension_ranges(), layout.global_shape, strict=True)
    ]
