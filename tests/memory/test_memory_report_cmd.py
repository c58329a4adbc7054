"""`shardls report`: formats, optimizer state, HBM headroom, exact mode and its errors."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
from memory_helpers import MODELS, REPO, run, static_models

TRANSFORMER = str(MODELS / "transformer.py")
MESH = ("--mesh", "data=2,model=4")


def test_text_table_totals_and_subtotals(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "report", f"{TRANSFORMER}::Transformer", *MESH)
    assert result.code == 0
    assert "blocks.up.kernel" in result.out
    assert "P(None, 'data', 'model')" in result.out
    assert "per submodule:" in result.out
    assert "parameters: 183,776,256; bytes: 367,552,512; fullest device: 45,967,360 bytes" in result.out


def test_json_is_stable(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "report", f"{TRANSFORMER}::Transformer", *MESH, "--output-format", "json")
    data = json.loads(result.out)
    (model,) = data["models"]
    assert set(model) >= {
        "name",
        "path",
        "line",
        "param_count",
        "total_bytes",
        "max_bytes_per_device",
        "params",
        "assumptions",
    }
    lines = (MODELS / "transformer.py").read_text().splitlines()
    assert model["name"] == "Transformer"
    assert lines[model["line"] - 1].startswith("class Transformer(")
    up = next(p for p in model["params"] if p["name"] == "blocks.up.kernel")
    assert up == {
        "name": "blocks.up.kernel",
        "count": 1,
        "global_shape": [12, 1024, 4096],
        "dtype": "bfloat16",
        "spec": [None, "data", "model"],
        "shard_shape": [12, 512, 1024],
        "bytes_per_device": 12 * 512 * 1024 * 2,
        "total_bytes": 12 * 1024 * 4096 * 2,
    }
    assert sum(p["total_bytes"] for p in model["params"]) == model["total_bytes"]


def test_csv_and_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    rows = list(
        csv.DictReader(io.StringIO(run(capsys, "report", TRANSFORMER, *MESH, "--output-format", "csv").out))
    )
    assert {r["model"] for r in rows} == {"Transformer"}  # Block is part of it
    assert len(rows) == 9
    markdown = run(capsys, "report", f"{TRANSFORMER}::Block", *MESH, "--output-format", "markdown").out
    assert markdown.startswith("## Block")
    assert "| param | global shape |" in markdown


def test_optimizer_and_hbm_headroom(capsys: pytest.CaptureFixture[str]) -> None:
    fits = run(
        capsys, "report", f"{TRANSFORMER}::Transformer", *MESH, "--optimizer", "adamw", "--hbm", "16GiB"
    )
    assert fits.code == 0
    assert "optimizer state (adamw: two moments (mu, nu) per parameter, in the parameter dtype" in fits.out
    assert "(fits)" in fits.out
    over = run(
        capsys, "report", f"{TRANSFORMER}::Transformer", *MESH, "--optimizer", "adam", "--hbm", "100MB"
    )
    assert over.code == 1
    assert "DOES NOT FIT" in over.out


def test_optimizer_state_sizes() -> None:
    from shardls.memory.optimizer import OPTIMIZERS, optimizer_state

    model = static_models("mlp.py", "data=2,model=4", only="MLP")[0]
    assert optimizer_state(model, OPTIMIZERS["sgd"]).total_bytes == 0
    assert optimizer_state(model, OPTIMIZERS["momentum"]).total_bytes == model.total_bytes
    adam = optimizer_state(model, OPTIMIZERS["adam"])
    assert (adam.total_bytes, adam.bytes_per_device) == (
        2 * model.total_bytes,
        2 * model.max_bytes_per_device,
    )
    # adafactor: up.kernel (512, 2048) -> rows (2048,) + cols (512,); 1-D params keep a full v.
    factored = optimizer_state(model, OPTIMIZERS["adafactor"])
    kernels = 2 * (2048 + 512 + 2) * 4
    vectors = sum((p.size or 0) + 3 for p in model.params if len(p.shape) == 1) * 4
    assert factored.total_bytes == kernels + vectors


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "report").code == 2
    missing = run(capsys, "report", f"{TRANSFORMER}::Nope")
    assert missing.code == 2 and "no nnx.Module named Nope" in missing.err
    assert run(capsys, "report", TRANSFORMER, "--compare").code == 2


def test_exact_compare_prints_notice_and_agreement(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --rules, the rules the factory enters are read statically and used around the call."""
    monkeypatch.chdir(REPO)
    result = run(
        capsys, "report", "--exact", "tests.memory.models.transformer:make_model", *MESH, "--compare"
    )
    assert result.code == 0
    assert (
        "exact mode uses the logical axis rules make_model creates its model under "
        "(with nnx.logical_axis_rules(...) at line 78, read statically" in result.err
    )
    assert "exact mode imports and runs tests.memory.models.transformer:make_model" in result.err
    assert "equals exact mode's for every parameter" in result.out


def test_exact_without_jax_says_how_to_install(tmp_path: object) -> None:
    code = (
        "import sys; sys.modules['jax'] = None; sys.modules['flax'] = None\n"
        "from shardls.cli.main import main\n"
        "sys.exit(main(['report', '--exact', 'a.b:c']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 2
    assert "pip install 'shardls[exact]'" in done.stderr


def test_memory_package_never_imports_jax() -> None:
    code = (
        "import sys; import shardls.memory, shardls.cli.report_cmd\n"
        "from shardls.memory.discover import file_models\n"
        "from shardls.analysis.workspace import Workspace\n"
        "file_models(Workspace(), 'm.py', open(sys.argv[1]).read())\n"
        "assert not {'jax', 'flax', 'numpy'} & set(sys.modules), sorted(sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, TRANSFORMER], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
