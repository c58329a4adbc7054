"""Bounds on work and on what reaches the terminal: `check` costs the same per file however
large the workspace; hostile loops and huge sizes end in a note, not a hang or a crash; escape
sequences from the workspace never reach the terminal raw.

Work is counted (files listed, files read), never timed; a `check` subprocess has a hang limit
far beyond its normal time. Timings are in benchmarks/ (`bench_check_scale.py`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shardls.analysis import workspace as workspace_module
from shardls.cli.main import main
from shardls.render.visible import visible

HANG = 120
HEAD = (
    "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
    "mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
)


def run(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shardls", *args], cwd=folder, capture_output=True, text=True, timeout=HANG
    )


def clean(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert "internal error" not in result.stderr, result.stderr


# -- check is linear in files ------------------------------------------------------------------


@pytest.mark.parametrize("files", [20, 80])
def test_each_file_lists_and_reads_the_workspace_at_most_once_per_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], files: int
) -> None:
    """A file without a mesh looks for the workspace's only mesh; the workspace is listed once and
    each file read once per run, not once per checked file (which made `check` quadratic)."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "train.py").write_text(HEAD)
    for index in range(files):
        (tmp_path / f"m{index}.py").write_text(f"x = jnp.zeros(({index + 1},)); P('data')\n")
    listings: list[int] = []
    reads: list[str] = []
    list_files = workspace_module.Workspace._list_python_files
    from shardls.files import read_workspace_file as read

    def counted_listing(self: workspace_module.Workspace) -> list[str]:
        listings.append(1)
        return list_files(self)

    def counted_read(path: str, *args: object, **kwargs: object) -> bytes:
        reads.append(str(path))
        return read(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(workspace_module.Workspace, "_list_python_files", counted_listing)
    monkeypatch.setattr("shardls.analysis.workspace.read_workspace_file", counted_read)
    monkeypatch.setattr("shardls.cli.check_files.PARALLEL_MIN_FILES", 10**9)
    monkeypatch.chdir(tmp_path)
    assert main(["check", ".", "--output-format", "json"]) == 0
    capsys.readouterr()
    assert len(listings) == 1
    assert len(reads) <= files + 1  # each file at most once (the disk cache holds 512)


# -- hostile loops and sizes -------------------------------------------------------------------


def test_nested_loops_of_params_are_bounded(tmp_path: Path) -> None:
    (tmp_path / "loops.py").write_text(
        "import jax\nfrom flax import nnx\n\nclass Net(nnx.Module):\n    def __init__(self, rngs):\n"
        "        self.ps = nnx.List()\n        for i in range(10**4):\n            for j in range(10**4):\n"
        "                self.ps.append(nnx.Param(jax.numpy.zeros((4, 4))))\n\nmodel = Net(nnx.Rngs(0))\n"
    )
    clean(run(tmp_path, "check", "loops.py", "--show-layouts"))
    report = run(tmp_path, "report", "loops.py")
    clean(report)
    assert "its body is counted once" in report.stdout


@pytest.mark.parametrize("exponent", [127, 100, 60])
def test_huge_sizes_render(tmp_path: Path, exponent: int) -> None:
    (tmp_path / "big.py").write_text(
        HEAD + f"x = jax.device_put(jnp.zeros((2**{exponent},)*12), NamedSharding(mesh, P('data')))\n"
    )
    (tmp_path / "bigm.py").write_text(
        "import jax.numpy as jnp\nfrom flax import nnx\nclass Net(nnx.Module):\n    def __init__(self, rngs):\n"
        f"        self.w = nnx.Param(jnp.zeros((2**{exponent},)*12))\nmodel = Net(nnx.Rngs(0))\n"
    )
    for args in (
        ("check", "big.py", "--show-layouts"),
        ("check", "big.py", "--output-format", "json"),
        ("report", "bigm.py"),
        ("explain", "big.py:5"),
    ):
        clean(run(tmp_path, *args))


# -- escape sequences --------------------------------------------------------------------------


def test_control_characters_are_shown_one_for_one() -> None:
    assert visible("a\x1b[2Jb\x07\tc\x9b") == "a␛[2Jb␇\tc\ufffd"
    assert len(visible("\x1b]0;title\x07")) == len("\x1b]0;title\x07")
    assert visible("two\nlines\r") == "two\nlines␍"


@pytest.mark.skipif(os.name != "posix", reason="file names with control characters")
def test_escape_sequences_never_reach_the_terminal(tmp_path: Path) -> None:
    name = "m\x1b[31m.py"
    (tmp_path / name).write_text(
        HEAD
        + "y = jax.device_put(jnp.zeros((9, 16)), NamedSharding(mesh, P('data', '\x1b]0;x\x07')))  # \x1b[2J\n"
    )
    for args in (
        ("check", "."),
        ("check", ".", "--show-layouts"),
        ("check", ".", "--output-format", "concise"),
    ):
        result = run(tmp_path, *args)
        clean(result)
        assert "\x1b" not in result.stdout and "\x07" not in result.stdout
        assert "SH001" in result.stdout and "␛" in result.stdout
    explained = run(tmp_path, "explain", f"{name}:5")
    clean(explained)
    assert "\x1b" not in explained.stdout and "\x07" not in explained.stdout and "␛" in explained.stdout
    exact = json.loads(run(tmp_path, "check", ".", "--output-format", "json").stdout)
    assert exact["diagnostics"][0]["path"] == name  # JSON keeps the data exact


def test_layout_text_shows_control_characters_visibly(tmp_path: Path) -> None:
    result = run(tmp_path, "layout", "--mesh", "d\x1b[31m=8", "--shape", "16", "--spec", "P('d\x1b[31m')")
    clean(result)
    assert "\x1b" not in result.stdout and "␛" in result.stdout
