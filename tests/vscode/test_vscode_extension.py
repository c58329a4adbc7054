"""The VS Code extension in a real VS Code: build the .vsix (`npm run package`), install it into
code-server in a fresh profile, and check in Chromium what a user sees (vscode-extension/test/e2e);
then open a booby-trapped folder, trusted and in Restricted Mode, and check that none of its
traps runs while the server still hovers (vscode-extension/test/e2e/traps.ts).

Never skipped: what is missing is installed (vscode_tools.py), or the test fails saying what to do.
Screenshots land in vscode-extension/out/screenshots.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from vscode_tools import CHROMIUM, ensure_tools

EXTENSION = Path(__file__).resolve().parents[2] / "vscode-extension"
SCREENSHOTS = EXTENSION / "out" / "screenshots"
SCREENSHOT_NAMES = ("hover", "problems", "inlay-hints", "quick-fix", "notebook")
"""The screenshots of what a user sees in a model file and a notebook (README's images)."""
HANG_S = 1800
"""Three code-server sessions take one to three minutes; far longer only when something hangs."""


def npm(*args: str, timeout: float) -> str:
    """Runs npm in the extension's folder; the output, or a failure that shows it."""
    npm_path = shutil.which("npm")
    assert npm_path is not None, "npm is missing: install Node.js 20 and npm"
    # The bundle is built with this interpreter's pip (the project's .venv under dev.py).
    env = {**os.environ, "SHARDLS_BUILD_PYTHON": sys.executable}
    result = subprocess.run(
        [npm_path, *args], cwd=EXTENSION, env=env, capture_output=True, text=True, timeout=timeout
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"npm {' '.join(args)} failed:\n{output[-8000:]}"
    return output


def test_the_extension_works_in_vscode(tmp_path: Path) -> None:
    code_server = ensure_tools()
    lock, installed = EXTENSION / "package-lock.json", EXTENSION / "node_modules" / ".package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        npm("ci", timeout=HANG_S)
    version = json.loads((EXTENSION / "package.json").read_text())["version"]
    vsix = EXTENSION / f"shardls-{version}.vsix"
    vsix.unlink(missing_ok=True)
    npm("run", "package", timeout=HANG_S)
    assert vsix.exists(), f"npm run package made no {vsix.name}"
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)

    output = npm(
        "run",
        "e2e",
        "--",
        str(vsix),
        str(code_server),
        str(CHROMIUM),
        str(tmp_path / "e2e"),
        str(SCREENSHOTS),
        sys.executable,  # an interpreter with shardls installed, for importStrategy fromEnvironment
        timeout=HANG_S,
    )

    print(output)
    for name in (*SCREENSHOT_NAMES, "traps-trusted", "traps-restricted"):
        assert (SCREENSHOTS / f"{name}.png").exists()
