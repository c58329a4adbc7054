"""Differential tests: `compute_layout(..., context=SHARD_SHAPE)` against JAX's own
`NamedSharding(AbstractMesh(...), P(...)).shard_shape(shape)`, which needs no devices.

Thousands of seeded random cases (meshes of 1-4 axes, up to 65 536 devices, mixed axis types,
every kind of spec entry JAX accepts or rejects) must agree exactly: the same shard shape when
JAX accepts, and a first error whose code matches JAX's exception when it raises.
"""

from __future__ import annotations

import collections
import math
import random
from typing import Any

import jax
from core_cases import AXIS_NAMES, AXIS_SIZES, UNCONSTRAINED_TOKEN, UNKNOWN_NAMES, random_case
from core_support import describe, jax_shard_shape, judge_accepted, judge_error, our_layout
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jax._src.op_shardings import op_sharding_to_indices

from shardls.core import UsageContext

SEED = 20250117
N_CASES = 20000


def check_case(case: dict[str, Any]) -> tuple[str, str | None]:
    kind, shape, ns = jax_shard_shape(case)
    layout = our_layout(case, UsageContext.SHARD_SHAPE)
    if kind != "ok":
        return kind, judge_error(layout, kind)
    assert shape is not None and ns is not None
    problem = judge_accepted(layout, shape)
    # (Unreduced axes make JAX's is_fully_replicated False unless the mesh has one device.)
    partial = bool(case.get("unreduced")) and layout.mesh.size > 1
    replicated = layout.num_distinct_shards == 1 and not partial
    if problem is None and all(case["shape"]) and ns.is_fully_replicated != replicated:
        problem = (
            f"is_fully_replicated={ns.is_fully_replicated} but {layout.num_distinct_shards} distinct shards"
        )
    return kind, problem


def _features(case: dict[str, Any]) -> set[str]:
    """What a case exercises, to prove the random sweep covers what it claims to."""
    spec, shape = case["spec"], case["shape"]
    sizes = dict(zip(case["names"], case["sizes"], strict=True))
    found = {f"axes={len(case['names'])}"}
    if len(set(case["types"])) > 1:
        found.add("mixed axis types")
    if math.prod(case["sizes"]) >= 1000:
        found.add(">=1000 devices")
    if len(spec) > len(shape):
        found.add("too-long spec")
    if len(spec) < len(shape):
        found.add("short spec")
    if spec == []:
        found.add("P()")
    if spec and spec[-1] is None:
        found.add("trailing None")
    if 0 in shape:
        found.add("zero-size dim")
    if not shape:
        found.add("scalar")
    for d, entry in enumerate(spec):
        if entry == UNCONSTRAINED_TOKEN:
            found.add("UNCONSTRAINED")
        if isinstance(entry, str) and entry in UNKNOWN_NAMES:
            found.add("unknown name")
        if isinstance(entry, dict):
            (how, items) = next(iter(entry.items()))
            found.add({0: "()", 1: f"1-{how}"}.get(len(items), how))
            if None in items:
                found.add("None inside tuple")
            if UNCONSTRAINED_TOKEN in items:
                found.add("UNCONSTRAINED inside tuple")
            factor = math.prod(sizes.get(a, 1) for a in items if isinstance(a, str))
        else:
            factor = sizes.get(entry, 1) if isinstance(entry, str) else 1
        if d < len(shape) and 0 < shape[d] < factor:
            found.add("dim smaller than factor")
    return found


def test_shard_shape_agrees_with_jax_on_random_cases() -> None:
    rng = random.Random(SEED)
    outcomes: collections.Counter[str] = collections.Counter()
    features: collections.Counter[str] = collections.Counter()
    disagreements = []
    for _ in range(N_CASES):
        case = random_case(rng)
        features.update(_features(case))
        kind, problem = check_case(case)
        outcomes[kind] += 1
        if problem:
            disagreements.append(f"{describe(case)}: {problem}")

    assert sum(outcomes.values()) == N_CASES >= 5000
    assert not disagreements, f"{len(disagreements)} disagreements with JAX, e.g.\n" + "\n".join(
        disagreements[:20]
    )
    # Every JAX outcome occurs often, so agreement is not vacuous.
    for kind in ("ok", "duplicate", "unknown_axis", "unconstrained_needs_auto", "index", "indivisible"):
        assert outcomes[kind] >= 150, outcomes
    assert outcomes["ok"] >= N_CASES // 3, outcomes
    expected_features = [
        *(f"axes={n}" for n in range(1, 5)),
        "mixed axis types",
        ">=1000 devices",
        "too-long spec",
        "short spec",
        "P()",
        "trailing None",
        "zero-size dim",
        "scalar",
        "UNCONSTRAINED",
        "unknown name",
        "()",
        "1-tuple",
        "1-list",
        "tuple",
        "list",
        "None inside tuple",
        "UNCONSTRAINED inside tuple",
        "dim smaller than factor",
    ]
    for feature in expected_features:
        assert features[feature] >= 40, (feature, features)


def test_unreduced_and_reduced_agree_with_jax() -> None:
    """`P(..., unreduced=, reduced=)`: overlaps (SH010), unknown or non-Explicit axes (SH009), and
    otherwise no effect on the shard shape (reference §1.7)."""
    rng = random.Random(SEED + 2)
    outcomes: collections.Counter[str] = collections.Counter()
    disagreements = []
    for _ in range(4000):
        case = random_case(rng)
        pool = [*case["names"], "foo"]
        case["unreduced"] = sorted(a for a in pool if rng.random() < 0.2)
        case["reduced"] = sorted(a for a in pool if rng.random() < 0.12)
        kind, problem = check_case(case)
        outcomes[kind] += 1
        if problem:
            disagreements.append(
                f"{describe(case)} unreduced={case['unreduced']} reduced={case['reduced']}: {problem}"
            )
    assert not disagreements, "\n".join(disagreements[:20])
    for kind in ("ok", "overlap", "bad_unreduced"):
        assert outcomes[kind] >= 300, outcomes


# A smaller property-based sweep: hypothesis explores differently and shrinks any failure.

_ITEMS = st.sampled_from((*AXIS_NAMES, *UNKNOWN_NAMES[:2]))


@st.composite
def _cases(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(AXIS_NAMES), min_size=1, max_size=4, unique=True))
    sizes = [draw(st.sampled_from(AXIS_SIZES)) for _ in names]
    types = [draw(st.sampled_from(("Auto", "Explicit"))) for _ in names]
    known = st.sampled_from(names)
    item = st.one_of(known, known, _ITEMS, st.none(), st.just(UNCONSTRAINED_TOKEN))
    entry = st.one_of(
        st.none(),
        known,
        _ITEMS,
        st.just(UNCONSTRAINED_TOKEN),
        st.builds(
            lambda how, items: {how: items}, st.sampled_from(("tuple", "list")), st.lists(item, max_size=3)
        ),
    )
    spec = draw(st.lists(entry, max_size=5))
    size_by_name = dict(zip(names, sizes, strict=True))
    shape = []
    for d in range(draw(st.integers(0, 4))):
        e = spec[d] if d < len(spec) else None
        axes = e[next(iter(e))] if isinstance(e, dict) else [e]
        factor = math.prod(size_by_name.get(a, 1) for a in axes if isinstance(a, str))
        shape.append(draw(st.one_of(st.integers(0, 40), st.integers(1, 4).map(lambda k, f=factor: k * f))))
    return {"names": names, "sizes": sizes, "types": types, "spec": spec, "shape": shape}


@settings(
    derandomize=True,
    max_examples=400,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(_cases())
def test_shard_shape_agrees_with_jax_property(case: dict[str, Any]) -> None:
    kind, problem = check_case(case)
    assert problem is None, f"{describe(case)} ({kind}): {problem}"


def test_device_blocks_agree_with_jax_index_maps_on_large_abstract_meshes() -> None:
    """`Layout.device_blocks()` against JAX's device-free index map (the private path the
    reference documents for AbstractMesh, §3.4) on meshes of up to 2048 devices; replica ids are
    numbered as `jax._src.sharding_impls.device_replica_id_map` does: the how-many-th device
    (in mesh order) holding an identical index."""
    rng = random.Random(SEED + 1)
    compared = large = 0
    disagreements = []
    while compared < 500:
        case = random_case(rng, max_devices=2048)
        kind, shape, ns = jax_shard_shape(case)
        if kind != "ok":
            continue
        assert ns is not None
        compared += 1
        large += ns.mesh.size >= 1000
        global_shape = tuple(case["shape"])
        indices = op_sharding_to_indices(
            ns._to_xla_hlo_sharding(len(global_shape)), global_shape, ns.mesh.size
        )
        seen: collections.Counter[tuple[tuple[int | None, ...], ...]] = collections.Counter()
        expected = []
        for index in indices:
            key = tuple((s.start, s.stop) for s in index)
            expected.append(
                (tuple(None if s == slice(None) else (s.start, s.stop) for s in index), seen[key])
            )
            seen[key] += 1
        layout = our_layout(case, UsageContext.SHARD_SHAPE)
        ours = [(b.index, b.replica_id) for b in layout.device_blocks()]
        if ours != expected:
            first = next(i for i, (a, b) in enumerate(zip(ours, expected, strict=True)) if a != b)
            disagreements.append(
                f"{describe(case)}: device {first}: JAX {expected[first]}, shardls {ours[first]}"
            )
        if layout.num_distinct_shards != len(seen) or layout.copies != ns.mesh.size // len(seen):
            disagreements.append(
                f"{describe(case)}: JAX {len(seen)} distinct, shardls {layout.num_distinct_shards}"
            )
    assert not disagreements, "\n".join(disagreements[:20])
    assert large >= 15


def test_jax_is_the_real_jax() -> None:
    # The versions the reference verified; a different JAX may legitimately differ.
    assert jax.__version__.startswith("0.10.")
