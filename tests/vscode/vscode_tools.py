"""What the VS Code end-to-end test runs on, installed when missing: Debian's Chromium and the
packages code-server's native modules build with (apt), and code-server itself (npm, pinned) in a
cache folder outside the repository. Nothing is skipped: a tool that cannot be installed fails the
run with what to do. The recipe and its pitfalls: /work/shared/docs/editor-testing.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

CODE_SERVER_VERSION = "4.100.3"
"""VS Code 1.100.3: the newest code-server that runs on Node 20."""
APT_PACKAGES = (
    "chromium",
    "ripgrep",
    "build-essential",
    "pkg-config",
    "libxkbfile-dev",
    "libsecret-1-dev",
    "libkrb5-dev",
)
CHROMIUM = Path("/usr/bin/chromium")
CACHE = Path(os.environ.get("SHARDLS_E2E_CACHE", Path.home() / ".cache" / "shardls-vscode-e2e"))
"""Where code-server is installed (about 300 MB); override with SHARDLS_E2E_CACHE."""
RIPGREP_CACHE = "vscode-ripgrep-cache-1.15.11"
RIPGREP_ARCHIVE = "ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz"


class ToolError(RuntimeError):
    """A tool the test needs is missing and could not be installed."""


def ensure_tools() -> Path:
    """Install what is missing; returns the code-server executable."""
    _ensure_apt_packages()
    return _ensure_code_server()


def _ensure_apt_packages() -> None:
    missing = [name for name in APT_PACKAGES if not _installed(name)]
    if not missing:
        return
    command = ["apt-get", "install", "--yes", "--no-install-recommends", *missing]
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        raise ToolError(
            f"missing Debian packages {', '.join(missing)}; install them: sudo {' '.join(command)}"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for step in (["apt-get", "update"], command):
        _run(step, env=env, cwd=None, what="installing " + ", ".join(missing))


def _installed(package: str) -> bool:
    result = subprocess.run(
        ["dpkg-query", "--show", "--showformat=${Status}", package], capture_output=True, text=True
    )
    return result.returncode == 0 and result.stdout.endswith(" installed")


def _ensure_code_server() -> Path:
    """code-server from npm, into CACHE/code-server-VERSION, with the fixes its install needs as root."""
    home = CACHE / f"code-server-{CODE_SERVER_VERSION}"
    executable = home / "node_modules" / ".bin" / "code-server"
    stamp = home / ".installed"
    if stamp.exists() and executable.exists():
        return executable
    if shutil.which("npm") is None:
        raise ToolError("npm is missing: install Node.js 20 and npm")
    shutil.rmtree(home, ignore_errors=True)
    scratch = home / "tmp"
    _offline_ripgrep(scratch / RIPGREP_CACHE)
    (home / "package.json").write_text('{"private": true}\n')
    env = {
        **os.environ,
        "TMPDIR": str(scratch),  # where @vscode/ripgrep looks for its download cache
        "npm_config_unsafe_perm": "true",  # its postinstall refuses root otherwise
        "npm_config_yes": "true",  # node-pty's `npx node-gyp` must not prompt
        "npm_config_nodedir": "/usr",  # node-gyp: the local Node headers (nodejs.org is unreachable)
        "npm_config_dangerously_allow_all_scripts": "true",  # npm 11 blocks install scripts by default
        "npm_config_fund": "false",
        "npm_config_audit": "false",
    }
    _run(
        ["npm", "install", "--no-save", f"code-server@{CODE_SERVER_VERSION}"],
        env=env,
        cwd=home,
        what=f"installing code-server {CODE_SERVER_VERSION} into {home}",
    )
    if not executable.exists():
        raise ToolError(f"installing code-server left no {executable}")
    shutil.rmtree(scratch, ignore_errors=True)
    stamp.write_text(CODE_SERVER_VERSION)
    return executable


def _offline_ripgrep(folder: Path) -> None:
    """@vscode/ripgrep downloads `rg` from GitHub; give it Debian's, where it looks first."""
    rg = shutil.which("rg")
    if rg is None:
        raise ToolError("ripgrep is missing: apt-get install ripgrep")
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(folder / RIPGREP_ARCHIVE, "w:gz") as archive:
        archive.add(rg, arcname="rg")


def _run(command: list[str], *, env: dict[str, str], cwd: Path | None, what: str) -> None:
    print("+", " ".join(command), flush=True)
    result = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).splitlines()[-40:])
        raise ToolError(f"{what} failed ({' '.join(command)} exited {result.returncode}):\n{tail}")
