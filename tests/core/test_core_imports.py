"""The core (and the package root) must load without jax, jaxlib or flax, and the core without
numpy: the language server starts in environments that have none of them. Each import runs in a
fresh interpreter, since this test process has imported jax already."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("jax", "jaxlib", "flax", "numpy")


def modules_loaded_by(code: str) -> set[str]:
    """Top-level names of the HEAVY packages that are in sys.modules after running `code`."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.strip().splitlines()[-1])) & set(HEAVY)


@pytest.mark.parametrize("module", ["shardls", "shardls.core"])
def test_import_loads_no_jax_flax_or_numpy(module: str) -> None:
    assert modules_loaded_by(f"import {module}") == set()


def test_core_api_runs_without_jax_or_numpy() -> None:
    code = (
        "from shardls.core import Mesh, PartitionSpec, compute_layout, parse_dtype\n"
        "layout = compute_layout(Mesh.of({'data': 2, 'model': 4}), PartitionSpec.of(None, 'model'), (8, 12),"
        " parse_dtype('bf16'))\n"
        "assert layout.shard_shape == (8, 3) and len(layout.device_blocks()) == 8"
    )
    assert modules_loaded_by(code) == set()


def test_seed_function_needs_numpy_but_not_jax() -> None:
    code = "import shardls\nassert list(shardls.partition_spec_layout(4, 8, 16)) == [8.0, 4.0]"
    assert modules_loaded_by(code) == {"numpy"}


def test_the_probe_sees_heavy_imports() -> None:
    # The checks above are only meaningful if an import would be seen.
    assert modules_loaded_by("import numpy") == {"numpy"}
    assert {"jax", "jaxlib", "numpy"} <= modules_loaded_by("import jax")
