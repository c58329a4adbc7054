"""Device blocks, copies, replica ids, bytes and per-context errors against real JAX arrays on 8
and 16 fake CPU devices.

`--xla_force_host_platform_device_count` must be set before jax is imported, so JAX runs in a
subprocess (core_jax_worker.py, one per device count and group of cases) and reports what it did
as JSON; the comparison with shardls happens here.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from core_cases import UNCONSTRAINED_TOKEN, random_device_case
from core_support import describe, error_codes, fake_devices_env, judge_accepted, judge_error, our_layout

from shardls.core import UNCONSTRAINED, Layout, UsageContext

WORKER = Path(__file__).with_name("core_jax_worker.py")
DEVICE_COUNTS = (8, 16)

CONTEXTS = {
    "device_put": UsageContext.DEVICE_PUT,
    "jit_out": UsageContext.JIT,
    "jit_in": UsageContext.JIT,
    "wsc": UsageContext.WSC,
    "wsc_eager": UsageContext.WSC_EAGER,
    "wsc_in_set_mesh": UsageContext.WSC,
    "shard_map": UsageContext.SHARD_MAP,
    "reshard": UsageContext.RESHARD,
    "out_bytes": UsageContext.JIT,
    "flax_param": UsageContext.PARAM,
    "shape_dtype_struct": UsageContext.ABSTRACT,
}


def run_jax(device_count: int, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, str(WORKER)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        env=fake_devices_env(device_count),
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout)
    assert out["device_count"] == device_count
    assert len(out["results"]) == len(cases)
    return list(out["results"])


def compare_shards(layout: Layout, result: dict[str, Any], op: str) -> list[str]:
    """Every observable of a JAX array against the layout: blocks, replica ids, counts, bytes."""
    problems = []
    blocks = {str(b.device_id): b for b in layout.device_blocks()}
    shards = result["shards"]
    if set(blocks) != set(shards):
        return [f"devices: JAX {sorted(shards, key=int)}, shardls {sorted(blocks, key=int)}"]
    for device, shard in shards.items():
        block = blocks[device]
        jax_index = tuple(None if i is None else tuple(i) for i in shard["index"])
        if shard["map_index"] != shard["index"]:
            problems.append(f"device {device}: JAX's shard index and devices_indices_map differ")
        if jax_index != block.index:
            problems.append(f"device {device}: index JAX {jax_index}, shardls {block.index}")
        if shard["replica_id"] != block.replica_id:
            problems.append(
                f"device {device}: replica_id JAX {shard['replica_id']}, shardls {block.replica_id}"
            )
        # (a computed zero-size output has the global shape on every device: 0 bytes either way)
        if tuple(shard["shape"]) != layout.shard_shape and (layout.global_bytes or op == "device_put"):
            problems.append(f"device {device}: data shape JAX {shard['shape']}, shardls {layout.shard_shape}")
        if shard["nbytes"] != layout.bytes_per_device:
            problems.append(
                f"device {device}: nbytes JAX {shard['nbytes']}, shardls {layout.bytes_per_device}"
            )
    distinct = len({json.dumps(s["index"]) for s in shards.values()})
    if layout.num_distinct_shards != distinct:
        problems.append(f"distinct shards: JAX {distinct}, shardls {layout.num_distinct_shards}")
    if layout.copies != len(shards) // distinct:
        problems.append(f"copies: JAX {len(shards) // distinct}, shardls {layout.copies}")
    largest = max(s["replica_id"] for s in shards.values())
    if layout.copies != 1 + largest:
        problems.append(f"copies {layout.copies} but JAX's largest replica_id is {largest}")
    return problems


def judge(case: dict[str, Any], result: dict[str, Any]) -> list[str]:
    """What shardls gets wrong about one JAX result (empty if nothing)."""
    op = case["op"]
    layout = our_layout(case, CONTEXTS[op])
    if not result["ok"] and result["kind"] == "wsc_assert":
        # The assert of an all-Explicit mesh failed: shardls warns that it only asserts (SH013)
        # (and may know more: an uneven spec can never match the value's sharding).
        if "SH013" not in [p.code for p in layout.problems]:
            return [f"JAX's constraint asserted; shardls says {[p.code for p in layout.problems]}"]
        return []
    if not result["ok"]:
        problem = judge_error(layout, result["kind"])
        return [f"{problem}; JAX said {result['error']}: {result['message'][:200]}"] if problem else []
    if op in ("wsc", "wsc_eager") and UNCONSTRAINED in layout.spec.entries:
        # The compiler chooses the sharding of unconstrained dimensions (reference §1.5-1.6), and
        # outside jit an uneven constraint is then compiled and padded too: only acceptance counts.
        return [f"JAX accepts it but shardls reports {error_codes(layout)}"] if error_codes(layout) else []
    if op == "wsc":
        # Uneven shards are padded to ceil(n/k) inside jit on Auto axes: a warning, not an error.
        found = judge_accepted(layout, result["per_device_shape"])
        if found is None and layout.padded != any(p.code == "SH007" for p in layout.problems):
            found = f"padded={layout.padded} but problems {[p.code for p in layout.problems]}"
        return [found] if found else []
    if op == "shard_map":
        found = judge_accepted(layout, result["block_shape"])
        return [found] if found else []
    if op == "out_bytes":
        if error_codes(layout) or layout.bytes_per_device != result["bytes_per_device"]:
            ours = f"{layout.bytes_per_device} {error_codes(layout)}"
            return [f"bytes/device JAX {result['bytes_per_device']}, shardls {ours}"]
        return []
    if op == "shape_dtype_struct":
        # JAX builds an uneven struct: no error, and no shard shape either.
        if error_codes(layout):
            return [f"JAX builds the struct but shardls reports {error_codes(layout)}"]
        if result["shard_shape"] != (None if layout.shard_shape is None else list(layout.shard_shape)):
            return [f"shard shape: JAX {result['shard_shape']}, shardls {layout.shard_shape}"]
        if result["shard_shape"] is None and "SH001" not in [p.code for p in layout.problems]:
            return ["an uneven struct with no SH001 warning"]
        return []
    if op == "jit_in":
        return [f"JAX accepts it but shardls reports {error_codes(layout)}"] if error_codes(layout) else []
    found = judge_accepted(layout, result["shard_shape"])
    return [found] if found else compare_shards(layout, result, op)


def disagreements(cases: list[dict[str, Any]], results: list[dict[str, Any]]) -> list[str]:
    out = []
    for case, result in zip(cases, results, strict=True):
        out.extend(f"{describe(case)}: {problem}" for problem in judge(case, result))
    return out


def random_cases(seed: int, device_count: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    cases = [random_device_case(rng, "device_put", device_count) for _ in range(1000)]
    cases += [random_device_case(rng, "jit_out", device_count) for _ in range(25)]
    cases += [random_device_case(rng, "jit_in", device_count) for _ in range(15)]
    cases += [random_device_case(rng, "wsc_eager", device_count, types="not_all_explicit") for _ in range(20)]
    cases += [
        random_device_case(rng, "wsc", device_count, types="not_all_explicit", non_empty=True)
        for _ in range(60)
    ]
    cases += [random_device_case(rng, "shard_map", device_count, types="auto") for _ in range(25)]
    cases += [random_device_case(rng, "shape_dtype_struct", device_count) for _ in range(60)]
    return cases


@pytest.mark.parametrize("device_count", DEVICE_COUNTS)
def test_random_layouts_agree_with_jax_arrays(device_count: int) -> None:
    cases = random_cases(1000 + device_count, device_count)
    results = run_jax(device_count, cases)
    found = disagreements(cases, results)
    assert not found, f"{len(found)} disagreements:\n" + "\n".join(found[:25])
    # Real coverage: many accepted device_puts with blocks compared (permuted devices, empty arrays,
    # every dtype), every error class, and constraints that XLA padded.
    pairs = list(zip(cases, results, strict=True))
    put = [(c, r) for c, r in pairs if c["op"] == "device_put"]
    accepted = [c for c, r in put if r["ok"]]
    assert len(accepted) >= 400
    assert sum(bool(c.get("device_ids")) for c in accepted) >= 300
    assert sum(0 in c["shape"] for c in accepted) >= 30
    assert all(sum(c["dtype"] == d for c in accepted) >= 100 for d in ("float32", "bfloat16", "int8"))
    kinds = {r["kind"] for _, r in put if not r["ok"]}
    expected = {"duplicate", "unknown_axis", "unconstrained_needs_auto", "rank", "rank_assert", "indivisible"}
    assert expected | {"unconstrained_keyerror"} <= kinds, kinds
    wsc = [c for c, r in pairs if c["op"] == "wsc" and r["ok"]]
    assert len(wsc) >= 25
    assert sum(our_layout(c, UsageContext.WSC).padded for c in wsc) >= 2


def _enc(entry: Any) -> Any:
    if isinstance(entry, tuple):
        return {"tuple": [_enc(e) for e in entry]}
    if isinstance(entry, list):
        return {"list": [_enc(e) for e in entry]}
    return entry


U = UNCONSTRAINED_TOKEN


def case(
    op: str,
    axes: dict[str, int],
    spec: tuple[Any, ...],
    shape: tuple[int, ...],
    *,
    types: str | tuple[str, ...] = "Auto",
    device_ids: list[int] | None = None,
    dtype: str = "float32",
    jax: bool | str = True,
    first: str | None = None,
    warns: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A hand-written case. `jax` is what JAX must do (True: accept; else the error kind), `first`
    the exact first error code shardls must report and `warns` a warning it must report."""
    return {
        "op": op,
        "names": list(axes),
        "sizes": list(axes.values()),
        "types": [types] * len(axes) if isinstance(types, str) else list(types),
        "spec": [_enc(e) for e in spec],
        "shape": list(shape),
        "device_ids": device_ids,
        "dtype": dtype,
        "expect": {"jax": jax, "first": first, "warns": warns},
        **extra,
    }


DM = {"data": 2, "model": 4}
PERMUTED = [7, 3, 5, 1, 6, 2, 4, 0]


def fixed_cases(device_count: int) -> list[dict[str, Any]]:
    """The reference's worked examples and every context's distinctive behaviour."""
    cases = [
        # §2 worked example: which device holds which rows, and replica ids.
        case("device_put", DM, (("data", "model"),), (8, 8)),
        case("device_put", DM, (("model", "data"),), (8, 8)),
        case("device_put", DM, ("data",), (8, 8)),
        case("device_put", DM, ("model",), (8, 8)),
        case("device_put", DM, (("data", "model"),), (8, 8), device_ids=PERMUTED),
        case("device_put", DM, (("model", "data"), None), (8, 8), device_ids=PERMUTED),
        case("device_put", DM, (None, ("model", "data")), (16, 8), device_ids=PERMUTED, dtype="bfloat16"),
        case("device_put", DM, ("model", "data"), (16, 32), device_ids=PERMUTED, dtype="int8"),
        case("device_put", {"a": 1, "b": 8}, ("a",), (3, 16)),
        case("device_put", {"a": 1, "b": 8}, (("a", "b"),), (16, 3)),
        case("device_put", DM, ("data", "model"), (0, 32)),
        case("device_put", DM, ("data",), (0, 32)),
        case("device_put", DM, (), ()),
        # rank errors: any spec longer than the rank, P(None) on a scalar
        case("device_put", DM, ("data", None), (16,), jax="rank", first="SH002"),
        case("device_put", DM, ("data", "model"), (16,), jax="rank", first="SH002"),
        case("device_put", DM, (None,), (), jax="rank", first="SH003"),
        case("device_put", DM, (None, None), (), types="Explicit", jax="rank", first="SH003"),
        case("device_put", DM, ("model",), (), types="Explicit", jax="rank_assert", first="SH002"),
        # an Explicit axis is checked for divisibility before the rank (trailing None trimmed)
        case(
            "device_put",
            DM,
            ("model", None, None),
            (2, 4),
            types="Explicit",
            jax="indivisible",
            first="SH001",
        ),
        case("device_put", DM, ("model", None, None), (4, 4), types="Explicit", jax="rank", first="SH002"),
        case("device_put", DM, ("model", None, None), (2, 4), jax="rank", first="SH002"),
        # P.UNCONSTRAINED crashes device_put; indivisible dimensions
        case("device_put", DM, (U, "model"), (16, 32), jax="unconstrained_keyerror", first="SH008"),
        case("device_put", DM, (U,), (), jax="unconstrained_keyerror", first="SH008"),
        case("device_put", DM, ("data",), (15, 32), jax="indivisible", first="SH001"),
        case("device_put", DM, ("model",), (2, 32), jax="indivisible", first="SH001"),
        case("device_put", DM, ("data",), (1, 32), jax="indivisible", first="SH001"),
        case("device_put", DM, ("data",), (15, 32), types="Explicit", jax="indivisible", first="SH001"),
        # construction errors
        case("device_put", DM, ("data", "data"), (16, 32), jax="duplicate", first="SH004"),
        case("device_put", DM, (("data", None), ("model", None)), (16, 32), jax="duplicate", first="SH004"),
        case("device_put", DM, (("data", None),), (16, 32), jax="unknown_axis", first="SH005"),
        case("device_put", DM, ("dat",), (16, 32), jax="unknown_axis", first="SH005"),
        case("device_put", DM, (U,), (16,), types="Explicit", jax="unconstrained_needs_auto", first="SH006"),
        # jit in/out shardings: never uneven, never UNCONSTRAINED, never too long
        case("jit_out", DM, (("model", "data"),), (16, 4), device_ids=PERMUTED),
        case("jit_out", DM, ("data",), (15, 32), jax="indivisible", first="SH001"),
        case("jit_out", DM, (U,), (16, 32), jax="unconstrained_rejected", first="SH008"),
        case("jit_out", DM, ("data", None), (16,), jax="rank", first="SH002"),
        case("jit_in", DM, ("data",), (16, 32)),
        case("jit_in", DM, (None, "model"), (16, 30), jax="indivisible", first="SH001"),
        case("jit_in", DM, (U,), (16, 32), jax="unconstrained_rejected", first="SH008"),
        case("jit_in", DM, (None,), (), jax="rank", first="SH003"),
        # with_sharding_constraint inside jit pads uneven Auto shards to ceil(n/k) (compiled HLO)
        case("wsc", DM, ("model",), (6, 32), warns="SH007"),
        case("wsc", DM, ("model",), (3, 32), warns="SH007"),
        case("wsc", DM, ("model",), (13, 32), warns="SH007"),
        case("wsc", DM, (("data", "model"),), (12, 4), warns="SH007"),
        case("wsc", DM, (None, "model"), (3, 6), device_ids=PERMUTED, warns="SH007"),
        case("wsc", DM, ("model",), (16, 32)),
        case("wsc", DM, ("data", None), (16,), jax="rank", first="SH002"),
        case("wsc", {"data": 2, "model": 4}, ("model",), (6, 32), types=("Explicit", "Auto"), warns="SH007"),
        case(
            "wsc", DM, ("data",), (6, 32), types=("Explicit", "Auto"), jax="wsc_explicit_axis", first="SH014"
        ),
        # ... but outside jit it is an error
        case("wsc_eager", DM, ("model",), (6, 32), jax="indivisible", first="SH001"),
        case("wsc_eager", DM, ("model",), (8, 32)),
        case("wsc_eager", DM, ("model", U), (6, 32), warns="SH007"),  # compiled, so padded
        case(
            "wsc_eager",
            DM,
            ("model",),
            (8, 32),
            types=("Auto", "Explicit"),
            jax="wsc_explicit_axis",
            first="SH014",
        ),
        # all-Explicit mesh under jax.set_mesh: the constraint only asserts (SH013)
        case("wsc_in_set_mesh", DM, ("data",), (8, 32), types="Explicit", input_spec=["data"], warns="SH013"),
        case(
            "wsc_in_set_mesh",
            DM,
            ("data",),
            (8, 32),
            types="Explicit",
            input_spec=[],
            jax="wsc_assert",
            warns="SH013",
        ),
        # ... and never pads Explicit axes: no value can have an uneven sharding
        case(
            "wsc_in_set_mesh",
            DM,
            ("model",),
            (6, 32),
            types="Explicit",
            input_spec=[],
            jax="wsc_assert",
            first="SH001",
            warns="SH013",
        ),
        # shard_map in_specs: block shapes, and errors
        case("shard_map", DM, ("data", "model"), (16, 32)),
        case("shard_map", DM, (("model", "data"),), (16, 32), device_ids=PERMUTED),
        case("shard_map", DM, ("data",), (15, 32), jax="indivisible", first="SH001"),
        case("shard_map", DM, ("data", "model"), (16,), jax="rank", first="SH002"),
        case("shard_map", DM, ("foo",), (16, 32), jax="unknown_axis", first="SH005"),
        case("shard_map", DM, (U,), (16, 32), jax="unconstrained_rejected", first="SH008"),
        # ShapeDtypeStruct: the rank is checked (extra Nones too), divisibility is not
        case("shape_dtype_struct", DM, ("data", "model"), (16, 32)),
        case("shape_dtype_struct", DM, ("model",), (2, 3), warns="SH001"),
        case("shape_dtype_struct", DM, ("model",), (2, 3), types="Explicit", warns="SH001"),
        case("shape_dtype_struct", DM, ("data", None, None), (4, 4), jax="rank", first="SH002"),
        case("shape_dtype_struct", DM, ("data", "data"), (4, 4), jax="duplicate", first="SH004"),
        case("shape_dtype_struct", DM, ("dat",), (4, 4), jax="unknown_axis", first="SH005"),
        # reshard needs Explicit axes
        case("reshard", DM, ("data", "model"), (16, 32), types="Explicit"),
        case("reshard", DM, ("data",), (16, 32), jax="reshard_auto", first="SH011"),
        # Flax NNX eager sharding
        case("flax_param", DM, ("data", "model"), (16, 32)),
        case("flax_param", DM, (None, ("model", "data")), (4, 16), types="Explicit", device_ids=PERMUTED),
        case(
            "flax_param",
            DM,
            ("data",),
            (16, 32),
            types=("Auto", "Explicit"),
            jax="mixed_axis_types",
            first="SH012",
        ),
        case("flax_param", DM, ("model",), (6, 32), jax="indivisible", first="SH001"),
        # XLA's packed bytes per device (sub-byte types are packed; numpy says 1 byte each)
        case("out_bytes", DM, (), (4096,), dtype="int4"),
        case("out_bytes", DM, ("model",), (4096,), dtype="int4"),
        case("out_bytes", DM, (("data", "model"),), (4096,), dtype="uint4"),
        case("out_bytes", DM, (), (4096,), dtype="float4_e2m1fn"),
        case("out_bytes", DM, ("data",), (4096,), dtype="int2"),
        case("out_bytes", DM, ("data", "model"), (64, 32), dtype="bfloat16"),
        case("out_bytes", DM, (None, "model"), (64, 32), dtype="float8_e4m3fn"),
    ]
    if device_count >= 16:
        axes = {"data": 2, "model": 4, "x": 2}
        perm = list(reversed(range(16)))
        cases += [
            case("device_put", axes, (("model", "data"), "x"), (16, 6), device_ids=perm),
            case("device_put", axes, (("data", "x"), "model"), (16, 8), device_ids=perm),
            case("device_put", axes, (("x", "data"), "model"), (16, 8), device_ids=perm),
            case("device_put", axes, (("x", "model", "data"),), (32, 3), device_ids=perm, dtype="bfloat16"),
            case(
                "device_put",
                axes,
                (None, ("data", "model", "x")),
                (3, 32),
                types=("Explicit", "Auto", "Auto"),
            ),
            case(
                "device_put",
                axes,
                ("x",),
                (4, 4),
                device_ids=[3, 9, 12, 0, 5, 7, 1, 14, 2, 8, 15, 4, 11, 6, 10, 13],
            ),
            case("device_put", {"a": 16}, ("a",), (48,)),
            case(
                "jit_out", axes, (("x", "model"), None, "data"), (8, 3, 2), types="Explicit", device_ids=perm
            ),
            case("wsc", axes, (("model", "x"),), (9, 2), warns="SH007"),
            case("shard_map", axes, (("x", "data"), "model"), (8, 8), device_ids=perm),
        ]
    return cases


@pytest.mark.parametrize("device_count", DEVICE_COUNTS)
def test_fixed_layouts_agree_with_jax_arrays(device_count: int) -> None:
    cases = fixed_cases(device_count)
    results = run_jax(device_count, cases)
    found = disagreements(cases, results)
    for c, result in zip(cases, results, strict=True):
        expect = c["expect"]
        got = True if result["ok"] else result["kind"]
        if got != expect["jax"]:
            found.append(
                f"{describe(c)}: JAX did {got!r}, not {expect['jax']!r} ({result.get('message', '')[:200]})"
            )
        layout = our_layout(c, CONTEXTS[c["op"]])
        codes = error_codes(layout)
        if (codes[0] if codes else None) != expect["first"]:
            found.append(f"{describe(c)}: first error {codes[:1]}, expected {expect['first']}")
        if expect["warns"] and expect["warns"] not in [p.code for p in layout.problems]:
            found.append(f"{describe(c)}: no {expect['warns']} in {[p.code for p in layout.problems]}")
    assert not found, "\n".join(found)
