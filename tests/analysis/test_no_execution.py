"""Analysis reads code; it never imports, compiles or runs it.

Every file below would create a marker file (and try to open a socket) if it ran or were
imported. After analysing the workspace in every way a user can, no marker may exist.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from analysis_helpers import workspace

TRAP = """
import os, socket
open(os.path.join({root!r}, "MARKER-{name}"), "w").write("ran")
try:
    socket.create_connection(("127.0.0.1", 9), timeout=0.1)
except OSError:
    pass
"""

MODEL = """
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
from .config import D_MODEL
import pkg.helpers as helpers
__import__("os").system("touch {root}/MARKER-system")
exec("open('{root}/MARKER-exec', 'w')")
eval("open('{root}/MARKER-eval', 'w')")
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((D_MODEL, helpers.WIDTH)), NamedSharding(mesh, P("data", "model")))
"""


def _make(root: Path) -> list[Path]:
    traps = {
        name: TRAP.format(root=str(root), name=name)
        for name in ("init", "config", "conftest", "setup", "helpers")
    }
    files = {
        "pkg/__init__.py": traps["init"],
        "pkg/config.py": traps["config"] + "D_MODEL = 1024\n",
        "pkg/helpers.py": traps["helpers"] + "WIDTH = 64\n",
        "pkg/model.py": MODEL.format(root=str(root)),
        "conftest.py": traps["conftest"],
        "setup.py": traps["setup"],
    }
    workspace(root, files)
    cells = [
        {
            "cell_type": "code",
            "metadata": {},
            "source": TRAP.format(root=str(root), name="notebook"),
            "outputs": [],
        }
    ]
    (root / "nb.ipynb").write_text(
        json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    return sorted(root.rglob("*.py"))


def _markers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("MARKER-*"))


def test_the_analyzer_runs_nothing(tmp_path: Path) -> None:
    files = _make(tmp_path)
    analyzer = workspace(tmp_path, {})
    model = tmp_path / "pkg" / "model.py"
    for path in files:
        analyzer.analyze(str(path), path.read_text())
    result = analyzer.analyze(str(model), model.read_text())
    assert [s.shard_shape for s in result.sites if s.name == "x"] == [(512, 16)]
    assert _markers(tmp_path) == []


def test_shardls_check_runs_nothing(tmp_path: Path) -> None:
    _make(tmp_path)
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "shardls",
            "check",
            str(tmp_path),
            "--show-layouts",
            "--output-format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert completed.returncode in (0, 1), completed.stderr
    layouts = json.loads(completed.stdout)["layouts"]
    assert any(entry["name"] == "x" and entry["shard_shape"] == [512, 16] for entry in layouts)
    assert _markers(tmp_path) == []


def test_the_traps_do_fire_when_run(tmp_path: Path) -> None:
    """The proof above means something only if running a trap does leave its marker."""
    _make(tmp_path)
    subprocess.run([sys.executable, str(tmp_path / "setup.py")], timeout=60, check=True)
    assert _markers(tmp_path) == ["MARKER-setup"]
