"""Both sides of the in-process differential tests: JAX's answer for a JSON case on an
AbstractMesh (no devices needed), the shardls Layout for it, and the judgement of one against the
other. (Cases on real devices go through core_jax_worker.py instead.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from core_cases import decode_entry
from jax._src.named_sharding import DuplicateSpecError
from jax._src.sharding import IndivisibleError
from jax.sharding import AbstractMesh, NamedSharding
from jax.sharding import AxisType as JaxAxisType
from jax.sharding import PartitionSpec as P

from shardls.core import (
    UNCONSTRAINED,
    AxisType,
    Layout,
    Mesh,
    PartitionSpec,
    UsageContext,
    compute_layout,
    parse_dtype,
)

# JAX's error (as classified by the worker, or by class in-process) -> the codes that may come first.
ACCEPTED_CODES: dict[str, frozenset[str]] = {
    "duplicate": frozenset({"SH004"}),
    "unknown_axis": frozenset({"SH005"}),
    "unconstrained_needs_auto": frozenset({"SH006"}),
    "index": frozenset({"SH002", "SH003"}),
    "rank": frozenset({"SH002", "SH003"}),
    "rank_assert": frozenset({"SH002", "SH003"}),
    "wsc_explicit_axis": frozenset({"SH014"}),
    "overlap": frozenset({"SH010"}),
    "bad_unreduced": frozenset({"SH009"}),
    "indivisible": frozenset({"SH001"}),
    "unconstrained_keyerror": frozenset({"SH008"}),
    "unconstrained_rejected": frozenset({"SH008"}),
    "reshard_auto": frozenset({"SH011"}),
    "mixed_axis_types": frozenset({"SH012"}),
}


def our_mesh(case: dict[str, Any]) -> Mesh:
    ids = case.get("device_ids")
    return Mesh(
        tuple(case["names"]),
        tuple(case["sizes"]),
        tuple(AxisType(t) for t in case["types"]),
        device_ids=tuple(ids) if ids else None,
    )


def our_spec(case: dict[str, Any]) -> PartitionSpec:
    return PartitionSpec.of(
        *[decode_entry(e, UNCONSTRAINED) for e in case["spec"]],
        unreduced=case.get("unreduced", ()),
        reduced=case.get("reduced", ()),
    )


def our_layout(case: dict[str, Any], context: UsageContext) -> Layout:
    return compute_layout(
        our_mesh(case),
        our_spec(case),
        tuple(case["shape"]),
        dtype=parse_dtype(case.get("dtype", "float32")),
        context=context,
    )


def error_codes(layout: Layout) -> list[str]:
    return [p.code for p in layout.problems if p.is_error]


def judge_error(layout: Layout, kind: str) -> str | None:
    """None if shardls rejects the layout the way JAX did, else what is wrong."""
    codes = error_codes(layout)
    if kind not in ACCEPTED_CODES:
        return f"JAX failed in an unexpected way ({kind}); shardls says {codes}"
    if layout.shard_shape is not None or not codes:
        return f"JAX rejects it ({kind}) but shardls accepts it: shard_shape={layout.shard_shape}"
    if codes[0] not in ACCEPTED_CODES[kind]:
        return f"JAX rejects it ({kind}) but shardls' first error is {codes[0]} (all: {codes})"
    return None


def judge_accepted(layout: Layout, shard_shape: list[int] | tuple[int, ...]) -> str | None:
    codes = error_codes(layout)
    if codes:
        return f"JAX accepts it (shard shape {tuple(shard_shape)}) but shardls reports {codes}"
    if layout.shard_shape != tuple(shard_shape):
        return f"shard shape: JAX {tuple(shard_shape)}, shardls {layout.shard_shape}"
    return None


def describe(case: dict[str, Any]) -> str:
    mesh = ", ".join(
        f"{n}={s}:{t[0]}" for n, s, t in zip(case["names"], case["sizes"], case["types"], strict=True)
    )
    extra = f" devices={case['device_ids']}" if case.get("device_ids") else ""
    return f"{case.get('op', 'shard_shape')} mesh({mesh}){extra} spec={case['spec']} shape={case['shape']}"


def jax_named_sharding(case: dict[str, Any]) -> NamedSharding:
    mesh = AbstractMesh(
        tuple(case["sizes"]),
        tuple(case["names"]),
        axis_types=tuple(getattr(JaxAxisType, t) for t in case["types"]),
    )
    entries = [decode_entry(e, P.UNCONSTRAINED) for e in case["spec"]]
    return NamedSharding(
        mesh, P(*entries, unreduced=set(case.get("unreduced", ())), reduced=set(case.get("reduced", ())))
    )


def jax_shard_shape(case: dict[str, Any]) -> tuple[str, tuple[int, ...] | None, NamedSharding | None]:
    """("ok", shard shape, sharding) or (error kind, None, None), the way JAX 0.10 answers."""
    try:
        ns = jax_named_sharding(case)  # P(...) and NamedSharding(...) validate here
        return "ok", tuple(ns.shard_shape(tuple(case["shape"]))), ns
    except DuplicateSpecError:
        return "duplicate", None, None
    except IndivisibleError:
        return "indivisible", None, None
    except IndexError:
        return "index", None, None
    except ValueError as exc:
        if "cannot overlap" in str(exc):
            return "overlap", None, None
        if "Unreduced axes" in str(exc) or "Reduced axes" in str(exc):
            return "bad_unreduced", None, None
        if "is not found in mesh" in str(exc):
            return "unknown_axis", None, None
        if "cannot contain `P.UNCONSTRAINED`" in str(exc):
            return "unconstrained_needs_auto", None, None
        raise


def fake_devices_env(device_count: int) -> dict[str, str]:
    """The environment of a child process that runs JAX on `device_count` fake CPU devices (the
    count must be set before jax is imported, hence a child)."""
    return {
        **os.environ,
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={device_count}",
        "JAX_PLATFORMS": "cpu",
    }


TYPES_WORKER = Path(__file__).with_name("types_source_worker.py")
WORKER_HANG = 600
"""A hang limit for the JAX child, never a speed bound."""


def run_under_jax(programs: Sequence[str], env: Mapping[str, str]) -> list[Any]:
    """What JAX did with each source program, as tests/core/types_source_worker.py reports it, run
    in a child process with `env` (the fake device count must be set before jax is imported)."""
    return run_script_under_jax([str(TYPES_WORKER)], programs, env)


def run_script_under_jax(
    command: Sequence[str], programs: Sequence[str], env: Mapping[str, str]
) -> list[Any]:
    """The JSON a Python child (`python *command`, run with `env`) prints for the programs it
    reads as JSON on its standard input."""
    done = subprocess.run(
        [sys.executable, *command],
        input=json.dumps(list(programs)),
        capture_output=True,
        text=True,
        env=dict(env),
        timeout=WORKER_HANG,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    outcomes: list[Any] = json.loads(done.stdout)
    return outcomes
