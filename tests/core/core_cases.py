"""Random (mesh, spec, shape) cases shared by the differential tests and their JAX subprocess.

A case is plain JSON so that a subprocess with a different device count can rebuild it with
real JAX objects. Spec entries are encoded as:

- ``None``                      -> None
- ``"name"``                    -> the axis name
- ``{"tuple": [items]}``        -> a tuple of items (a name, None, or the UNCONSTRAINED token)
- ``{"list": [items]}``         -> the same items as a list (JAX turns it into a tuple)
- ``"@UNCONSTRAINED"``          -> ``P.UNCONSTRAINED``

Nothing here imports jax or shardls, so the worker and the tests can share it.
"""

from __future__ import annotations

import math
import random
from typing import Any

UNCONSTRAINED_TOKEN = "@UNCONSTRAINED"
AXIS_SIZES = (1, 2, 3, 4, 6, 8, 16)
AXIS_NAMES = ("data", "model", "fsdp", "tp", "x", "y")
UNKNOWN_NAMES = ("foo", "dat", "modle", "batch", "Data")

Case = dict[str, Any]


def random_mesh(
    rng: random.Random,
    *,
    max_axes: int = 4,
    sizes: tuple[int, ...] = AXIS_SIZES,
    max_devices: int | None = None,
) -> tuple[list[str], list[int], list[str]]:
    """Axis names, sizes and types ("Auto"/"Explicit") of a random mesh."""
    while True:
        n = rng.randint(1, max_axes)
        names = rng.sample(AXIS_NAMES, n)
        axis_sizes = [rng.choice(sizes) for _ in names]
        if max_devices is None or math.prod(axis_sizes) <= max_devices:
            break
    kind = rng.random()
    if kind < 0.35:
        types = ["Auto"] * n
    elif kind < 0.6:
        types = ["Explicit"] * n
    else:
        types = [rng.choice(("Auto", "Explicit")) for _ in names]
    return names, axis_sizes, types


def _odd_item(rng: random.Random, *, inside_tuple: bool) -> Any:
    """An item JAX rejects: an unknown name, or None / P.UNCONSTRAINED inside a tuple."""
    if not inside_tuple or rng.random() < 0.5:
        return rng.choice(UNKNOWN_NAMES)
    return None if rng.random() < 0.7 else UNCONSTRAINED_TOKEN


def _take(rng: random.Random, pool: list[str], names: list[str]) -> str | None:
    """Mostly a name not used yet (so most specs are valid), sometimes any name (a duplicate);
    None when the unused names ran out and no duplicate was drawn."""
    if pool and rng.random() < 0.95:
        return pool.pop(rng.randrange(len(pool)))
    return rng.choice(names) if not pool and rng.random() < 0.25 else None


def random_entry(rng: random.Random, names: list[str], pool: list[str]) -> Any:
    r = rng.random()
    if r < 0.25:
        return None
    if r < 0.55:
        return _odd_item(rng, inside_tuple=False) if rng.random() < 0.06 else _take(rng, pool, names)
    if r < 0.60:
        return UNCONSTRAINED_TOKEN
    if r < 0.64:
        return {rng.choice(("tuple", "list")): []}
    if r < 0.70:
        # 1-tuples collapse to their item, including (None,) and (UNCONSTRAINED,).
        item = rng.choice((_take(rng, pool, names), None, UNCONSTRAINED_TOKEN))
        return {rng.choice(("tuple", "list")): [item]}
    items: list[Any] = [a for a in (_take(rng, pool, names) for _ in range(rng.randint(2, 3))) if a]
    if rng.random() < 0.10:
        items.insert(rng.randint(0, len(items)), _odd_item(rng, inside_tuple=True))
    return {rng.choice(("tuple", "tuple", "list")): items}


def _factor_of(entry: Any, sizes: dict[str, int]) -> int:
    if isinstance(entry, dict):
        return math.prod(sizes.get(a, 1) for a in entry[next(iter(entry))] if isinstance(a, str))
    if isinstance(entry, str):
        return sizes.get(entry, 1)
    return 1


def random_dim(rng: random.Random, factor: int) -> int:
    r = rng.random()
    if r < 0.06:
        return 0
    if r < 0.16 and factor > 1:
        return rng.randint(1, factor - 1)  # smaller than the factor
    if r < 0.70:
        return factor * rng.randint(1, 4)
    return rng.randint(1, 40)


def random_spec_and_shape(
    rng: random.Random, names: list[str], axis_sizes: list[int]
) -> tuple[list[Any], list[int]]:
    rank = rng.choice((0, 1, 1, 2, 2, 2, 3, 3, 4))
    r = rng.random()
    if r < 0.65:
        length = rng.randint(0, rank)  # short or exact
    elif r < 0.85:
        length = rank + 1  # one too long
    else:
        length = rank + rng.randint(1, 3)
    pool = list(names)
    entries = [random_entry(rng, names, pool) for _ in range(length)]
    if rng.random() < 0.12 and entries:
        entries[-1] = None  # trailing None
    if rng.random() < 0.04 and len(entries) >= 2:
        # the same entry for two dimensions
        entries[rng.randrange(len(entries))] = entries[rng.randrange(len(entries))]
    sizes = dict(zip(names, axis_sizes, strict=True))
    shape = [random_dim(rng, _factor_of(entries[d], sizes) if d < len(entries) else 1) for d in range(rank)]
    return entries, shape


def random_case(rng: random.Random, *, max_elements: int | None = None, **mesh_kwargs: Any) -> Case:
    names, axis_sizes, types = random_mesh(rng, **mesh_kwargs)
    while True:
        spec, shape = random_spec_and_shape(rng, names, axis_sizes)
        if max_elements is None or math.prod(shape) <= max_elements:
            break
    return {"names": names, "sizes": axis_sizes, "types": types, "spec": spec, "shape": shape}


def random_device_case(
    rng: random.Random,
    op: str,
    device_count: int,
    *,
    max_elements: int = 4096,
    types: str = "any",
    non_empty: bool = False,
) -> Case:
    """A case on real devices: the mesh takes a random subset of the devices in a random order
    (or, sometimes, devices 0..n-1 in order). `types` is "any", "auto" (every axis Auto) or
    "not_all_explicit" (Auto, or a mix)."""
    while True:
        case = random_case(rng, max_elements=max_elements, max_devices=device_count)
        if not non_empty or all(case["shape"]):
            break
    if types == "auto" or (
        types == "not_all_explicit" and "Auto" not in case["types"] and rng.random() < 0.5
    ):
        case["types"] = ["Auto"] * len(case["types"])
    elif types == "not_all_explicit" and "Auto" not in case["types"]:
        case["types"][rng.randrange(len(case["types"]))] = "Auto"
    size = math.prod(case["sizes"])
    if rng.random() < 0.8:
        case["device_ids"] = rng.sample(range(device_count), size)
    case["op"] = op
    case["dtype"] = rng.choice(("float32", "bfloat16", "int8"))
    return case


def decode_entry(entry: Any, unconstrained: Any) -> Any:
    """The entry as a caller would write it, with `unconstrained` standing for the token."""
    if entry == UNCONSTRAINED_TOKEN:
        return unconstrained
    if isinstance(entry, dict):
        items = [unconstrained if a == UNCONSTRAINED_TOKEN else a for a in entry[next(iter(entry))]]
        return tuple(items) if "tuple" in entry else items
    return entry
