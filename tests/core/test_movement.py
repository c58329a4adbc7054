"""`data_movement`: the bytes each device receives when an array moves from one layout to another.

The random test counts the same figure by brute force from JAX's own block maps: both layouts are
device_put on 8 fake CPU devices (core_jax_worker.py, through `run_jax`), and for every device the
elements of its destination block (`devices_indices_map`) that are not in its source block are
counted one by one as a set difference. Every case must agree exactly.
"""

from __future__ import annotations

import collections
import math
import random
from typing import Any

import numpy as np
import pytest
from core_support import describe, our_layout
from test_core_devices import run_jax

from shardls.core import AxisType, Layout, Mesh, PartitionSpec, UsageContext, compute_layout, parse_dtype
from shardls.core.movement import DataMovement, MovementRefused, data_movement

SEED = 20261202
N_PAIRS = 600
DEVICES = 8
AXIS_NAMES = ("X", "Y", "Z")
ITEM_BYTES = {"float32": 4, "bfloat16": 2, "int8": 1}
MAX_ELEMENTS = 2048


def _factorizations(n: int, parts: int) -> list[tuple[int, ...]]:
    if parts == 1:
        return [(n,)]
    return [(d, *rest) for d in range(1, n + 1) if n % d == 0 for rest in _factorizations(n // d, parts - 1)]


MESH_SHAPES = [shape for parts in (1, 2, 3) for shape in _factorizations(DEVICES, parts)]
SUBSET_MESH_SHAPES = [shape for parts in (1, 2) for n in (2, 4) for shape in _factorizations(n, parts)]


def _random_mesh(rng: random.Random) -> dict[str, Any]:
    """A mesh over all 8 devices (in order or permuted), or now and then over a subset of them."""
    subset = rng.random() < 0.15
    sizes = list(rng.choice(SUBSET_MESH_SHAPES if subset else MESH_SHAPES))
    names = rng.sample(AXIS_NAMES, len(sizes))
    types = [rng.choice(("Explicit", "Auto")) for _ in names]
    device_ids = rng.sample(range(DEVICES), math.prod(sizes)) if subset or rng.random() < 0.5 else None
    return {"names": names, "sizes": sizes, "types": types, "device_ids": device_ids}


def _random_spec(rng: random.Random, mesh: dict[str, Any], rank: int) -> list[Any]:
    """Entries for at most `rank` dimensions: None, one axis, or a tuple of axes (never twice)."""
    pool = list(mesh["names"])
    rng.shuffle(pool)
    entries: list[Any] = []
    for _ in range(rank if rng.random() < 0.75 else rng.randint(0, rank)):
        r = rng.random()
        if r < 0.2 or not pool:
            entries.append(None)
        elif r < 0.7 or len(pool) == 1:
            entries.append(pool.pop())
        else:
            entries.append({"tuple": [pool.pop() for _ in range(rng.randint(2, len(pool)))]})
    return entries


def _factor(mesh: dict[str, Any], entries: list[Any], dim: int) -> int:
    entry = entries[dim] if dim < len(entries) else None
    axes = entry["tuple"] if isinstance(entry, dict) else [] if entry is None else [entry]
    sizes = dict(zip(mesh["names"], mesh["sizes"], strict=True))
    return math.prod(sizes[a] for a in axes)


def random_pair(rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two device_put cases of one array: same shape and dtype, shapes both specs divide."""
    source = _random_mesh(rng)
    destination = dict(source) if rng.random() < 0.5 else _random_mesh(rng)
    rank = rng.choice((0, 1, 1, 2, 2, 2, 3, 3, 3))
    source_spec = _random_spec(rng, source, rank)
    destination_spec = _random_spec(rng, destination, rank)
    steps = [
        math.lcm(_factor(source, source_spec, dim), _factor(destination, destination_spec, dim))
        for dim in range(rank)
    ]
    shape = [0 if rng.random() < 0.03 else step * rng.randint(1, 3) for step in steps]
    if math.prod(shape) > MAX_ELEMENTS:
        shape = steps  # at most 8 per dimension
    dtype = rng.choice(tuple(ITEM_BYTES))
    common = {"op": "device_put", "shape": shape, "dtype": dtype}
    return {**source, **common, "spec": source_spec}, {**destination, **common, "spec": destination_spec}


def brute_force(shape: list[int], source: dict[str, Any], destination: dict[str, Any]) -> dict[str, int]:
    """Per destination device id, the elements of its block (by JAX's index map) not in its source
    block, counted as a set difference of flat element numbers."""
    numbers = np.arange(math.prod(shape)).reshape(shape)

    def elements(index: list[list[int] | None]) -> Any:
        return numbers[tuple(slice(None) if i is None else slice(*i) for i in index)].ravel()

    received = {}
    for device, shard in destination["shards"].items():
        wanted = elements(shard["map_index"])
        held = source["shards"].get(device)
        present = elements(held["map_index"]) if held else np.empty(0, dtype=numbers.dtype)
        received[device] = int(np.setdiff1d(wanted, present).size)
    return received


def _features(source: Layout, destination: Layout, movement: DataMovement) -> set[str]:
    found = {f"rank={len(source.global_shape)}"}
    same_mesh = source.mesh == destination.mesh
    found.add("same mesh" if same_mesh else "other mesh")
    for layout in (source, destination):
        if layout.mesh.device_ids is not None:
            found.add("permuted devices" if layout.mesh.size == DEVICES else "subset of devices")
        if any(len(axes) > 1 for axes in layout.dim_axes):
            found.add("tuple entry")
        if layout.num_distinct_shards == 1:
            found.add("replicated")
    found.add("moves nothing" if movement.moves_nothing else "moves data")
    if not movement.is_uniform:
        found.add("uneven inflow")
    if 0 in source.global_shape:
        found.add("zero-size dim")
    return found


def test_movement_agrees_with_a_brute_force_count_over_jax_index_maps() -> None:
    rng = random.Random(SEED)
    pairs = [random_pair(rng) for _ in range(N_PAIRS)]
    results = run_jax(DEVICES, [case for pair in pairs for case in pair])
    features: collections.Counter[str] = collections.Counter()
    disagreements = []
    for (source_case, destination_case), source_result, destination_result in zip(
        pairs, results[::2], results[1::2], strict=True
    ):
        label = f"{describe(source_case)} -> {describe(destination_case)}"
        assert source_result["ok"] and destination_result["ok"], (label, source_result, destination_result)
        source = our_layout(source_case, UsageContext.DEVICE_PUT)
        destination = our_layout(destination_case, UsageContext.DEVICE_PUT)
        movement = data_movement(source, destination)
        features.update(_features(source, destination, movement))
        item = ITEM_BYTES[source_case["dtype"]]
        expected = brute_force(source_case["shape"], source_result, destination_result)
        ours = {str(d): n for d, n in zip(movement.device_ids, movement.received_elements, strict=True)}
        if ours != expected:
            disagreements.append(f"{label}: JAX's blocks {expected}, shardls {ours}")
            continue
        wanted_bytes = [n * item for n in expected.values()]
        if movement.max_bytes != max(wanted_bytes) or movement.total_bytes != sum(wanted_bytes):
            disagreements.append(
                f"{label}: bytes max/total {max(wanted_bytes)}/{sum(wanted_bytes)}, "
                f"shardls {movement.max_bytes}/{movement.total_bytes}"
            )
        if movement.received_bytes != tuple(n * item for n in movement.received_elements):
            disagreements.append(f"{label}: bytes are not elements x {item}")
    assert not disagreements, f"{len(disagreements)} disagreements:\n" + "\n".join(disagreements[:20])
    expected_features = {
        "same mesh": 200,
        "other mesh": 200,
        "permuted devices": 200,
        "subset of devices": 50,
        "tuple entry": 100,
        "replicated": 100,
        "moves nothing": 50,
        "moves data": 300,
        "uneven inflow": 50,
        "zero-size dim": 10,
        **{f"rank={r}": 50 for r in range(4)},
    }
    for feature, least in expected_features.items():
        assert features[feature] >= least, (feature, features)


# Obvious cases, by hand.

XY = Mesh(("X", "Y"), (2, 4), (AxisType.EXPLICIT,) * 2)
MIB = 2**20


def layout(spec: PartitionSpec, shape: tuple[int, ...] = (1024, 1024), mesh: Mesh = XY) -> Layout:
    return compute_layout(mesh, spec, shape, parse_dtype("float32"))


@pytest.mark.parametrize(
    "spec",
    [
        PartitionSpec.of(),
        PartitionSpec.of("X", "Y"),
        PartitionSpec.of(("Y", "X")),
        PartitionSpec.of(None, "Y"),
    ],
)
def test_the_same_layout_moves_nothing(spec: PartitionSpec) -> None:
    movement = data_movement(layout(spec), layout(spec))
    assert movement.moves_nothing and movement.max_bytes == movement.total_bytes == 0
    assert movement.device_ids == tuple(range(8))


@pytest.mark.parametrize("spec", [PartitionSpec.of("X", "Y"), PartitionSpec.of(None, ("X", "Y"))])
def test_replicated_to_sharded_moves_nothing(spec: PartitionSpec) -> None:
    assert data_movement(layout(PartitionSpec.of()), layout(spec)).moves_nothing


def test_sharded_to_replicated_brings_the_missing_seven_eighths_to_each_device() -> None:
    movement = data_movement(layout(PartitionSpec.of("X", "Y")), layout(PartitionSpec.of()))
    whole = 4 * MIB
    assert set(movement.received_bytes) == {whole * 7 // 8}
    assert set(movement.received_elements) == {1024 * 1024 * 7 // 8}
    assert movement.is_uniform and movement.receiving_devices == 8
    assert (movement.max_bytes, movement.total_bytes) == (whole * 7 // 8, 7 * whole)


def test_swapping_the_sharded_dimension_keeps_the_shared_corner() -> None:
    """P('Y', None) -> P(None, 'Y') over 4 devices: each keeps a quarter of its new block."""
    movement = data_movement(layout(PartitionSpec.of("Y", None)), layout(PartitionSpec.of(None, "Y")))
    block = 1024 * 1024 // 4
    assert set(movement.received_elements) == {block - block // 4}


def test_a_permuted_mesh_moves_blocks_between_devices() -> None:
    """The same spec on the reversed device order: device 0's block lived on device 7."""
    reversed_mesh = Mesh(("X", "Y"), (2, 4), (AxisType.EXPLICIT,) * 2, device_ids=tuple(range(7, -1, -1)))
    spec = PartitionSpec.of(("X", "Y"))
    movement = data_movement(layout(spec), layout(spec, mesh=reversed_mesh))
    assert movement.device_ids == tuple(range(7, -1, -1))
    assert set(movement.received_bytes) == {4 * MIB // 8}


def test_devices_outside_the_source_mesh_receive_their_whole_block() -> None:
    half = Mesh(("X",), (4,), (AxisType.EXPLICIT,), device_ids=(0, 1, 2, 3))
    everything = Mesh(("X",), (8,), (AxisType.EXPLICIT,))
    movement = data_movement(
        layout(PartitionSpec.of(), (64,), half), layout(PartitionSpec.of("X"), (64,), everything)
    )
    assert movement.received_elements == (0, 0, 0, 0, 8, 8, 8, 8)
    assert not movement.is_uniform and movement.receiving_devices == 4


def test_reduced_axes_move_like_replicas() -> None:
    reduced = PartitionSpec.of("Y", reduced=("X",))
    assert data_movement(layout(reduced), layout(PartitionSpec.of("Y"))).moves_nothing


def test_sub_byte_dtypes_count_packed_bytes() -> None:
    int4 = parse_dtype("int4")
    source = compute_layout(XY, PartitionSpec.of(("X", "Y")), (64,), int4)
    movement = data_movement(source, compute_layout(XY, PartitionSpec.of(), (64,), int4))
    assert set(zip(movement.received_elements, movement.received_bytes, strict=True)) == {(56, 28)}


@pytest.mark.parametrize(
    ("source", "destination", "reason"),
    [
        (layout(PartitionSpec.of("X")), layout(PartitionSpec.of("X"), (1024, 512)), "shape (1024, 1024)"),
        (
            layout(PartitionSpec.of("X")),
            compute_layout(XY, PartitionSpec.of("X"), (1024, 1024), parse_dtype("bfloat16")),
            "dtype float32 and bfloat16",
        ),
        (layout(PartitionSpec.of("Y"), (6, 8)), layout(PartitionSpec.of("X"), (6, 8)), "rejects the source"),
        (layout(PartitionSpec.of("X", unreduced=("Y",))), layout(PartitionSpec.of("X")), "unreduced over Y"),
        (
            layout(PartitionSpec.of()),
            layout(PartitionSpec.of(), mesh=Mesh(("X",), (8,), (AxisType.EXPLICIT,), device_ids=(0,) * 8)),
            "lists a device more than once",
        ),
        (
            layout(PartitionSpec.of(), mesh=Mesh(("X",), (8,), (AxisType.EXPLICIT,), device_ids=(0, 1))),
            layout(PartitionSpec.of()),
            "lists 2 devices for its 8 positions",
        ),
    ],
)
def test_what_is_refused_says_why(source: Layout, destination: Layout, reason: str) -> None:
    with pytest.raises(MovementRefused, match=reason.replace("(", r"\(").replace(")", r"\)")):
        data_movement(source, destination)


def test_every_mesh_shape_of_eight_devices_is_drawn() -> None:
    """The generator reaches every 1-3 axis mesh of 8 devices (a guard against a narrowed sweep)."""
    rng = random.Random(SEED)
    drawn = {tuple(_random_mesh(rng)["sizes"]) for _ in range(2000)}
    assert set(MESH_SHAPES) <= drawn
