"""What the real-editor tests share: the example file, the server command, a scratch home for the
editor, and running an editor script that reports what it saw as JSON.

The editors are real programs (Debian's Neovim 0.7.2 and Emacs 28 with eglot 1.9) started as
subprocesses; `python3 dev.py test` installs them when it runs as root or in CI. A missing editor
fails the test: a skipped editor test would let a broken set-up pass unnoticed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SERVER = [sys.executable, "-I", "-m", "shardls", "serve", "--log-level", "warning"]
TIMEOUT_S = 60.0
"""A whole editor run takes about a second; the margin is for a loaded CI machine."""
WAIT_MS = 15_000
"""How long the editor script waits for one thing (diagnostics, a hover, an edit's effect)."""

EXAMPLE = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
embed = jax.device_put(jnp.zeros((50257, 1024)), NamedSharding(mesh, P("model", None)))
hidden = jax.device_put(jnp.zeros((8, 1024)), NamedSharding(mesh, P(None, "model")))
typo = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("modle")))
"""
"""Line 5 (0-based) is SH001: 50257 rows over the 4 `model` devices. Line 6 is fine. Line 7 is
SH005 (unknown axis), which the tests' editor settings ignore, so its absence shows that the
settings reached the server."""

INDIVISIBLE_LINE = 5
HOVER_LINE = 6
HOVER_CHARACTER = EXAMPLE.split("\n")[HOVER_LINE].index('P(None, "model")')
HOVER_SHAPE = "per device bfloat16[8,256]"
"""The settings make unwritten dtypes bfloat16, and 1024 columns over 4 devices are 256."""

SETTINGS: dict[str, Any] = {"dtype": "bfloat16", "ignore": ["SH005"]}
"""The editor settings both tests send (as workspace settings or initializationOptions)."""


def require(program: str, package: str) -> str:
    """The program's path; fails (never skips) when it is missing, saying how to install it."""
    path = shutil.which(program)
    if path is None:
        pytest.fail(
            f"{program} is not installed: `apt-get install -y {package}` "
            "(python3 dev.py test does this itself when run as root or in CI)",
            pytrace=False,
        )
    return path


def scratch_env(home: Path) -> dict[str, str]:
    """The environment with HOME and XDG folders in `home`, so editors write nothing in the user's."""
    env = dict(os.environ)
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        folder = home / name.lower()
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    return env


def run_editor(command: list[str], env: dict[str, str], result: Path) -> dict[str, Any]:
    """Run the editor script; returns the JSON it wrote, failing with its output if it wrote none."""
    completed = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL
    )
    if not result.exists():
        pytest.fail(
            f"{command[0]} exited {completed.returncode} without writing {result.name}\n"
            f"stdout:\n{completed.stdout}\nstderr:\n{completed.stderr}",
            pytrace=False,
        )
    report: dict[str, Any] = json.loads(result.read_text())
    report["exit_code"] = completed.returncode
    report["stderr"] = completed.stderr
    return report


def editor_job(tmp_path: Path, settings: dict[str, object], **extra: object) -> tuple[dict[str, str], Path]:
    """Write the example project and the job the editor script reads (the file to open, the server
    command, the settings under the key that says how to pass them, where to hover and what to
    edit); returns the editor's environment and the path it writes its report to."""
    project = tmp_path / "project"
    project.mkdir()
    model = project / "model.py"
    model.write_text(EXAMPLE)
    result = tmp_path / "result.json"
    job = tmp_path / "job.json"
    job.write_text(
        json.dumps(
            {
                "file": str(model),
                "cmd": SERVER,
                **settings,
                **extra,
                "hover": {"line": HOVER_LINE, "character": HOVER_CHARACTER},
                "edit_line": INDIVISIBLE_LINE,
                "result": str(result),
                "timeout_ms": WAIT_MS,
            }
        )
    )
    return {**scratch_env(tmp_path / "home"), "SHARDLS_EDITOR_JOB": str(job)}, result
