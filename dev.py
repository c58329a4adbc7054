#!/usr/bin/env python3
"""The two commands a newcomer needs, each doing its own set-up on a machine with only python3.

    python3 dev.py demo   # shardls on the bundled examples
    python3 dev.py test   # lint, format check, type check and every test

Set-up is a `.venv` with the project installed (editable, with the `dev` extra); it is rebuilt
whenever pyproject.toml changes, so a fresh clone and an old checkout behave the same.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
STAMP = VENV / ".shardls-installed"


def run(*cmd: str | Path, check: bool = True, env: dict[str, str] | None = None) -> int:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    code = subprocess.call([str(c) for c in cmd], cwd=ROOT, env=env)
    if check and code != 0:
        sys.exit(code)
    return code


def ensure_venv() -> None:
    """Create .venv and install shardls[dev] unless it already matches pyproject.toml."""
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted and PYTHON.exists():
        return
    if not PYTHON.exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    run(PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    run(PYTHON, "-m", "pip", "install", "--quiet", "-e", ".[dev]")
    STAMP.write_text(wanted)


def demo() -> int:
    ensure_venv()
    shardls = BIN / "shardls"
    code = 0
    for args in (
        ("layout", "--mesh", "data=2,model=4", "--shape", "8,12", "--spec", "P(None, 'model')"),
        ("layout", "--mesh", "data=2,model=4", "--shape", "8,12", "--spec", "P('data', 'model')"),
        ("layout", "--mesh", "fsdp=8", "--shape", "50257,1024", "--spec", "P('fsdp')", "--dtype", "bfloat16"),
    ):
        code = max(code, run(shardls, *args, check=False))
    return 0 if code <= 1 else code


def test(extra: list[str]) -> int:
    ensure_venv()
    run(PYTHON, "-m", "ruff", "check", ".")
    run(PYTHON, "-m", "ruff", "format", "--check", ".")
    run(PYTHON, "-m", "mypy")
    return run(PYTHON, "-m", "pytest", "-n", "auto", *extra, check=False)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("demo", "test"):
        print(__doc__)
        return 2
    return demo() if argv[0] == "demo" else test(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
