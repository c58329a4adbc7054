"""Static totals equal what JAX computes (exact mode: `nnx.eval_shape` under an AbstractMesh),
exactly, for models of increasing size and for layers appended in loops or stacked by
`nnx.vmap`/`nnx.scan` calls; and exact mode's diff finds every planted mismatch."""

from __future__ import annotations

from dataclasses import replace

import pytest
from memory_helpers import REPO, static_models

from shardls.memory.compare import mismatches
from shardls.memory.model import ModelMemory
from shardls.meshtext import parse_mesh_text

CASES = [
    ("mlp.py", "mlp:make_model", "data=2,model=4", None, 0),
    ("transformer.py", "transformer:make_model", "data=2,model=4", "RULES", 0),
    ("llama.py", "llama:make_7b", "fsdp=8,tp=4", "RULES", 0),
    ("llama.py", "llama:make_70b", "fsdp=16,tp=8", "RULES", 1),
    ("loops.py", "loops:make_model", "data=2,model=4", None, 0),
    # The module-level factory's `Block(128, ...)` is the file's first instantiation.
    ("vmapped.py", "vmapped:make_model", "data=2,model=4", None, 1),
    ("scanned.py", "scanned:make_model", "data=2,model=4", None, 0),
    ("subclassed.py", "subclassed:make_model", "data=2,model=4", None, 0),
    ("presets.py", "presets:make_model", "fsdp=4,tp=2", None, 0),
]


def _exact(target: str, mesh: str, rules: str | None) -> ModelMemory:
    from shardls.exact import exact_model

    return exact_model(f"tests.memory.models.{target}", parse_mesh_text(mesh), rules, REPO)


@pytest.mark.parametrize(("file", "target", "mesh", "rules", "index"), CASES, ids=[c[1] for c in CASES])
def test_static_totals_equal_jax(file: str, target: str, mesh: str, rules: str | None, index: int) -> None:
    static = [m for m in static_models(file, mesh) if m.instantiation][index]
    exact = _exact(target, mesh, rules)
    assert (static.param_count, static.total_bytes, static.max_bytes_per_device) == (
        exact.param_count,
        exact.total_bytes,
        exact.max_bytes_per_device,
    )
    assert mismatches(static, exact) == []


def test_compare_lists_every_mismatch() -> None:
    static = [m for m in static_models("mlp.py", "data=2,model=4") if m.instantiation][0]
    exact = _exact("mlp:make_model", "data=2,model=4", None)
    kernel = static.params[0]
    changed = replace(kernel, shape=(512, 4096), shard_shape=(256, 1024))
    planted = replace(static, params=(changed, *static.params[2:]))
    found = mismatches(planted, exact)
    assert "up.bias: only in exact mode" in found
    assert "up.kernel: shape static (512, 4096) vs exact (512, 2048)" in found
    assert "up.kernel: per-device shape static (256, 1024) vs exact (256, 512)" in found
    assert any(line.startswith("param_count: static") for line in found)
