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
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"
STAMP = VENV / ".shardls-installed"
EXTENSION = ROOT / "vscode-extension"


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


def missing_editors() -> list[str]:
    """Debian packages of the real editors tests/editors drives that are not usable here."""
    missing = [
        package
        for program, package in (("nvim", "neovim"), ("emacs", "emacs-nox"))
        if not shutil.which(program)
    ]
    eglot = "(kill-emacs (if (require 'eglot nil t) 0 1))"  # built in from Emacs 29, elpa-eglot before
    if "emacs-nox" in missing or subprocess.call(
        ["emacs", "--batch", "--eval", eglot], stderr=subprocess.DEVNULL
    ):
        missing.append("elpa-eglot")
    return missing


def ensure_editors() -> None:
    """Install Neovim and Emacs + eglot with apt-get when missing (as root, or with sudo in CI).

    The editor tests fail rather than skip when an editor is missing, so a machine without them
    stops here, saying what to install, instead of in the middle of the test run.
    """
    missing = missing_editors()
    if not missing:
        return
    root = os.name != "nt" and os.geteuid() == 0
    sudo = [] if root else ["sudo", "-n"] if os.environ.get("CI") and shutil.which("sudo") else None
    if sudo is not None and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        run(*sudo, "apt-get", "update", "-q", env=env)
        run(*sudo, "apt-get", "install", "-y", "-q", "--no-install-recommends", *missing, env=env)
        missing = missing_editors()
    if missing:
        sys.exit(
            f"The editor tests (tests/editors) need: {' '.join(missing)}. Install them with\n"
            f"    sudo apt-get install -y {' '.join(missing)}\n"
            "(python3 dev.py test does this itself when run as root or in CI)."
        )


def check_extension() -> None:
    """The VS Code extension's eslint, prettier, tsc and unit tests, after `npm ci` whenever its
    package-lock.json changed. Its end-to-end test in a real VS Code is tests/vscode (pytest)."""
    if not shutil.which("npm"):
        sys.exit("The VS Code extension (vscode-extension/) needs Node.js 20 and npm: install them.")
    installed, lock = EXTENSION / "node_modules" / ".package-lock.json", EXTENSION / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        run("npm", "--prefix", EXTENSION, "ci", "--no-audit", "--no-fund")
    run("npm", "--prefix", EXTENSION, "run", "check")


def demo() -> int:
    """The main job: lint the bundled examples and show every layout. examples/mistakes.py holds
    deliberate mistakes, so shardls exits 1 there by design; only a crash or usage error fails."""
    ensure_venv()
    code = run(BIN / "shardls", "check", "examples/", "--show-layouts", check=False)
    return 0 if code in (0, 1) else code


def test(extra: list[str]) -> int:
    ensure_venv()
    ensure_editors()
    run(PYTHON, "-m", "ruff", "check", ".")
    run(PYTHON, "-m", "ruff", "format", "--check", ".")
    run(PYTHON, "-m", "mypy")
    check_extension()
    return run(PYTHON, "-m", "pytest", "-n", "auto", *extra, check=False)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("demo", "test"):
        print(__doc__)
        return 2
    return demo() if argv[0] == "demo" else test(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
