"""`shardls check` in worker processes: the workspace is indexed once, in the process that starts
them, and what they report is what one process reports."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from check_helpers import check, write

from shardls.analysis import recognizers
from shardls.analysis.analyzer import Analyzer
from shardls.analysis.settings import Settings
from shardls.analysis.workspace_meshes import WorkspaceMeshes
from shardls.cli import check_files

LAYER = (
    "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import PartitionSpec as P\n\n"
    "def layer_{i}(mesh):\n"
    "    return jax.device_put(jnp.zeros(({rows}, 16)), jax.sharding.NamedSharding(mesh, P('data')))\n"
)
TRAIN = "import jax\n\nmesh = jax.make_mesh((2, 4), ('data', 'model'))\n"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.mark.skipif(
    sys.platform != "linux" or (os.cpu_count() or 1) == 1, reason="workers fork only on Linux"
)
def test_the_workspace_is_searched_once_before_the_workers_fork(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every layer file builds no mesh and falls back on train.py's. Each search appends the
    searching process's id to a file: one line, this process's, means the workers inherited it."""
    layers = {f"layer_{i:02}.py": LAYER.format(i=i, rows=6 + 2 * (i % 2)) for i in range(20)}
    write(tmp_path, {"pyproject.toml": "[tool.shardls]\n", "train.py": TRAIN, **layers})
    searches = tmp_path / "searches.txt"
    scan = WorkspaceMeshes._scan

    def noted(self: WorkspaceMeshes, *args: object) -> object:
        with searches.open("a") as stream:
            stream.write(f"{os.getpid()}\n")
        return scan(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(WorkspaceMeshes, "_scan", noted)
    monkeypatch.setattr(check_files, "PARALLEL_MIN_FILES", 2)
    monkeypatch.setattr(check_files, "PARALLEL_MIN_BYTES", 1)
    parallel = check(capsys, "--no-cache", "--output-format", "json", "--show-layouts")
    assert searches.read_text().split() == [str(os.getpid())]
    layouts = json.loads(parallel.out)["layouts"]
    assert [layout["mesh"] for layout in layouts] == [{"data": 2, "model": 4}] * 20

    searches.unlink()
    monkeypatch.setattr(check_files, "PARALLEL_MIN_FILES", 10**6)
    serial = check(capsys, "--no-cache", "--output-format", "json", "--show-layouts")
    assert serial == parallel
    assert searches.read_text().split() == [str(os.getpid())]


@pytest.mark.skipif(
    sys.platform != "linux" or (os.cpu_count() or 1) == 1, reason="workers fork only on Linux"
)
def test_a_failing_index_costs_nothing_but_its_time(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in the index built before the workers start must not stop the check: each file
    then does its own search, as without the index."""
    layers = {f"layer_{i:02}.py": LAYER.format(i=i, rows=6) for i in range(20)}
    write(tmp_path, {"pyproject.toml": "[tool.shardls]\n", "train.py": TRAIN, **layers})
    monkeypatch.setattr(check_files, "PARALLEL_MIN_FILES", 10**6)
    serial = check(capsys, "--no-cache", "--output-format", "json", "--show-layouts")

    def broken(self: Analyzer, settings: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(Analyzer, "index_workspace", broken)
    monkeypatch.setattr(check_files, "PARALLEL_MIN_FILES", 2)
    monkeypatch.setattr(check_files, "PARALLEL_MIN_BYTES", 1)
    assert check(capsys, "--no-cache", "--output-format", "json", "--show-layouts") == serial


def _jobs(count: int, size: int) -> list[check_files.CheckJob]:
    return [
        check_files.CheckJob(Path(f"m{i}.py"), f"m{i}.py", Settings(), (Path(),), b"#" * size)
        for i in range(count)
    ]


def test_workers_start_only_for_enough_files_and_enough_source(monkeypatch: pytest.MonkeyPatch) -> None:
    """One process per processor, but none beyond one per PARALLEL_MIN_BYTES of source: a
    small repository is checked in this process, where workers would cost more than they save."""
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    per_file = check_files.PARALLEL_MIN_BYTES // 8
    assert check_files.worker_count(_jobs(check_files.PARALLEL_MIN_FILES - 1, 10**6)) == 1
    assert check_files.worker_count(_jobs(16, per_file)) == 2
    assert check_files.worker_count(_jobs(20, per_file)) == 2
    assert check_files.worker_count(_jobs(24, per_file)) == 3
    assert check_files.worker_count(_jobs(100, per_file)) == 4
    assert check_files.worker_count(_jobs(16, 10)) == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert check_files.worker_count(_jobs(100, per_file)) == 1


@pytest.mark.skipif(
    sys.platform != "linux" or (os.cpu_count() or 1) == 1, reason="workers fork only on Linux"
)
def test_the_recognizers_are_imported_once_before_the_workers_fork(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even where no file builds a mesh (the index then needs no recognizer), the workers
    inherit them instead of each importing them."""
    write(tmp_path, {"pyproject.toml": "[tool.shardls]\n", **{f"m{i:02}.py": "x = 1\n" for i in range(20)}})
    monkeypatch.setattr(check_files, "PARALLEL_MIN_FILES", 2)
    monkeypatch.setattr(check_files, "PARALLEL_MIN_BYTES", 1)
    monkeypatch.setattr(recognizers, "_loaded", False)
    check(capsys, "--no-cache", "--output-format", "json")
    assert recognizers._loaded
