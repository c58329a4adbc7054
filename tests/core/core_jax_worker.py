"""Run layout cases on real (fake CPU) JAX devices and print what JAX did, as JSON.

Usage: ``XLA_FLAGS=--xla_force_host_platform_device_count=N python core_jax_worker.py < cases.json``

The device count must be fixed before jax is imported, so the tests run this in a subprocess.
Each input case is a dict (see core_cases.py) with an ``op``; the output is one result per case:
``{"ok": true, ...observations}`` or ``{"ok": false, "kind": <error kind>, "error": <class>,
"message": <text>}``. This file reports facts only; the comparison with shardls is in the tests.
"""

from __future__ import annotations

import json
import os
import re
import sys
import warnings
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from core_cases import decode_entry

DEVICES = {d.id: d for d in jax.devices()}


def _mesh(case: dict[str, Any]) -> Mesh:
    ids = case.get("device_ids") or list(range(int(np.prod(case["sizes"]))))
    devices = np.array([DEVICES[i] for i in ids], dtype=object).reshape(case["sizes"])
    types = tuple(getattr(AxisType, t) for t in case["types"])
    return Mesh(devices, tuple(case["names"]), axis_types=types)


def _spec(case: dict[str, Any]) -> P:
    return P(*[decode_entry(e, P.UNCONSTRAINED) for e in case["spec"]])


def _index(index: tuple[slice, ...]) -> list[list[int] | None]:
    out: list[list[int] | None] = []
    for s in index:
        assert s.step is None, index
        out.append(None if s.start is None and s.stop is None else [s.start, s.stop])
    return out


def _shards(arr: Any) -> dict[str, Any]:
    """Everything JAX says about how `arr` is laid out, keyed by device id."""
    shape = tuple(arr.shape)
    index_map = arr.sharding.devices_indices_map(shape)
    return {
        "shard_shape": list(arr.sharding.shard_shape(shape)),
        "shards": {
            str(s.device.id): {
                "index": _index(s.index),
                "map_index": _index(index_map[s.device]),
                "replica_id": s.replica_id,
                "nbytes": int(s.data.nbytes),
                "shape": list(s.data.shape),
            }
            for s in arr.addressable_shards
        },
    }


def _classify(exc: BaseException) -> str:
    name = type(exc).__name__
    text = str(exc)
    if name == "DuplicateSpecError":
        return "duplicate"
    if name == "IndivisibleError" or "does not evenly divide" in text or "not evenly divisible" in text:
        return "indivisible"
    if isinstance(exc, KeyError) and "UNCONSTRAINED" in text:
        return "unconstrained_keyerror"
    if isinstance(exc, IndexError):
        return "index"
    if "is not found in mesh" in text:
        return "unknown_axis"
    if "cannot contain `P.UNCONSTRAINED`" in text:
        return "unconstrained_needs_auto"
    if "Unconstrained dims are not allowed" in text or "refers to UNCONSTRAINED" in text:
        return "unconstrained_rejected"
    if "is only valid for values of rank at least" in text or "which is too long" in text:
        return "rank"
    if "must refer to an axis marked as manual" in text:
        return "unknown_axis"
    if "cannot contain axis names that are of type Auto" in text:
        return "reshard_auto"
    if "all axes as Explicit or all axes as Auto" in text:
        return "mixed_axis_types"
    if isinstance(exc, AssertionError) and "acts as an assert" in text:
        return "wsc_assert"
    if "can only refer to Auto axes" in text:
        return "wsc_explicit_axis"
    if isinstance(exc, AssertionError) and re.match(r"\(\d+, P\(", text):
        # jax._src.core._make_lengths_same: a spec longer than the rank naming an Explicit axis
        return "rank_assert"
    return "other"


_SINE = re.compile(r"= \w+\[([\d,]*)\](?:\{[\d,]*\})? sine\(")


def run(case: dict[str, Any]) -> dict[str, Any]:
    op = case["op"]
    mesh = _mesh(case)
    shape = tuple(case["shape"])
    dtype = jnp.dtype(case.get("dtype", "float32"))
    ns = NamedSharding(mesh, _spec(case))
    x = np.zeros(shape, dtype)
    if op == "device_put":
        return _shards(jax.device_put(x, ns))
    if op == "jit_out":
        return _shards(jax.jit(lambda v: v + 1, out_shardings=ns)(x))
    if op == "jit_in":
        out = jax.jit(lambda v: v * 2, in_shardings=ns)(x)
        return {"out_shape": list(out.shape)}
    if op == "wsc_eager":
        return _shards(jax.lax.with_sharding_constraint(jax.device_put(x), ns))
    if op == "wsc":
        # The per-device shape XLA gives the constrained value: the `sine` right after it.
        f = jax.jit(lambda v: jnp.sin(jax.lax.with_sharding_constraint(v * 2, ns)))
        text = f.lower(x.astype(np.float32)).compile().as_text()
        shapes = {m.group(1) for m in _SINE.finditer(text)}
        assert len(shapes) == 1, shapes
        (dims,) = shapes
        return {"per_device_shape": [int(d) for d in dims.split(",") if d]}
    if op == "wsc_in_set_mesh":
        # Under jax.set_mesh of an all-Explicit mesh, with_sharding_constraint only asserts that
        # the value already has this sharding; the value is placed by `input_spec` first.
        placed = jax.device_put(
            x, NamedSharding(mesh, P(*[decode_entry(e, None) for e in case["input_spec"]]))
        )
        with jax.set_mesh(mesh):
            out = jax.jit(lambda v: jax.lax.with_sharding_constraint(v, ns))(placed)
        return _shards(out)
    if op == "shard_map":
        seen: list[tuple[int, ...]] = []

        def block(v: Any) -> Any:
            seen.append(tuple(v.shape))
            return v

        out = jax.shard_map(block, mesh=mesh, in_specs=(ns.spec,), out_specs=ns.spec)(x)
        return {"block_shape": list(seen[0]), "out_shape": list(out.shape)}
    if op == "shape_dtype_struct":
        # Building the struct checks what it checks; its shard shape is asked for separately (the
        # jit, lower or device_put given it asks), and is None where that raises.
        struct = jax.ShapeDtypeStruct(shape, dtype, sharding=ns)
        try:
            return {"shard_shape": list(struct.sharding.shard_shape(shape))}
        except ValueError:
            return {"shard_shape": None}
    if op == "reshard":
        with jax.set_mesh(mesh):
            return _shards(jax.sharding.reshard(jax.device_put(x), ns))
    if op == "out_bytes":
        # XLA's packed size per device of an output laid out by `ns` (sub-byte dtypes are packed).
        compiled = jax.jit(lambda: jnp.zeros(shape, dtype), out_shardings=ns).lower().compile()
        return {"bytes_per_device": int(compiled.memory_analysis().output_size_in_bytes)}
    if op == "flax_param":
        from flax import nnx

        init = nnx.with_partitioning(nnx.initializers.zeros_init(), ns.spec, mesh=mesh)
        param = nnx.Param(init(jax.random.key(0), shape, dtype))
        return _shards(param.get_value())
    raise ValueError(f"unknown op {op!r}")


def main() -> None:
    cases = json.load(sys.stdin)
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:
            try:
                result = {"ok": True, **run(case)}
            except Exception as exc:  # every failure is data for the test
                result = {
                    "ok": False,
                    "kind": _classify(exc),
                    "error": type(exc).__name__,
                    "message": str(exc)[:400],
                }
            results.append(result)
    json.dump({"device_count": len(DEVICES), "results": results}, sys.stdout)


if __name__ == "__main__":
    main()
