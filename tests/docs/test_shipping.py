"""What a team adopting shardls installs and copies: the pre-commit hook, the documented CI job,
the licence and package metadata, and the editor snippet of the getting-started guide. Each is
run as a user would run it, not only read."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
HANG_S = 120
"""Generous: a hang is far longer; the machine is busy."""

BAD = """\
import jax
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((8,), ("fsdp",))
x = jax.device_put(jax.numpy.zeros((50257, 1024)), NamedSharding(mesh, P("fsdp")))
"""
GOOD = BAD.replace("50257", "50256")


def _shardls_on_path(tmp_path: Path) -> dict[str, str]:
    """An environment whose `shardls` is this checkout's, as `pip install shardls` would give."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "shardls"
    launcher.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -I -m shardls "$@"\n')
    launcher.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = ""
    return env


def _run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
        check=False,
    )


def _fenced(markdown: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", markdown, flags=re.S | re.M)


# -- pre-commit ----------------------------------------------------------------------------------


def test_the_pre_commit_hook_fails_a_commit_with_a_layout_jax_rejects(tmp_path: Path) -> None:
    """pre-commit runs `entry` with the hook's args and the staged files' names appended."""
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "shardls-check"
    assert hook["language"] == "python"
    assert set(hook["types_or"]) == {"python", "pyi", "jupyter"}
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "good.py").write_text(GOOD)
    env = _shardls_on_path(tmp_path)
    args = " ".join(hook.get("args", []))

    bad = _run(f"{hook['entry']} {args} bad.py good.py", tmp_path, env)
    good = _run(f"{hook['entry']} {args} good.py", tmp_path, env)

    assert bad.returncode == 1, bad.stderr
    assert "bad.py:5:74: SH001" in bad.stdout
    assert good.returncode == 0, good.stdout + good.stderr


# -- GitHub Actions: SARIF for code scanning -------------------------------------------------------


def _workflow() -> dict[str, Any]:
    text = (ROOT / "docs" / "ci.md").read_text()
    workflow: dict[str, Any] = yaml.safe_load(_fenced(text, "yaml")[0])
    return workflow


def test_the_documented_workflow_writes_sarif_that_code_scanning_accepts(tmp_path: Path) -> None:
    """The workflow's own `run:` steps, in order, in a project with one finding; the upload step
    reads the file they write. The SARIF is checked for what SARIF 2.1.0 requires of each
    property GitHub's upload-sarif reads (no schema validator is installed offline)."""
    workflow = _workflow()
    assert workflow["permissions"]["security-events"] == "write"
    steps = workflow["jobs"]["shardls"]["steps"]
    (upload,) = [s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    project = tmp_path / "project"
    project.mkdir()
    (project / "model.py").write_text(BAD)
    (project / "other.py").write_text("import jax\n# noqa: SH001\n")
    env = _shardls_on_path(tmp_path)

    for step in steps:
        if "run" in step and "pip install" not in step["run"]:  # the checkout's shardls is on PATH
            done = _run(step["run"], project, env)
            assert done.returncode == 0, f"{step['name']}: {done.stderr}"

    document = json.loads((project / upload["with"]["sarif_file"]).read_text())
    assert document["version"] == "2.1.0"
    assert document["$schema"].endswith("sarif-2.1.0.json") or "2.1.0" in document["$schema"]
    (run,) = document["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "shardls"
    rule_ids = [rule["id"] for rule in driver["rules"]]
    assert len(rule_ids) == len(set(rule_ids))
    (result,) = [r for r in run["results"] if r["ruleId"] == "SH001"]
    assert result["level"] in {"none", "note", "warning", "error"}
    assert result["message"]["text"].startswith("dimension 0 of [50257, 1024]")
    (location,) = result["locations"]
    physical = location["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "model.py"  # relative: code scanning maps it to the repo
    assert physical["region"]["startLine"] == 5 and physical["region"]["startColumn"] >= 1
    assert all(rule_id in rule_ids for rule_id in {r["ruleId"] for r in run["results"]})


# -- licence and package metadata -----------------------------------------------------------------


def test_the_licence_is_the_one_the_metadata_names_in_every_package() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    licence = (ROOT / "LICENSE").read_text()
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    extension = json.loads((ROOT / "vscode-extension" / "package.json").read_text())
    assert extension["license"] == project["license"]
    assert (ROOT / "vscode-extension" / "LICENSE").read_text() == licence
    assert "--skip-license" not in extension["scripts"]["package"]
    assert "!LICENSE" in (ROOT / "vscode-extension" / ".vscodeignore").read_text().splitlines()


def test_package_metadata_for_pypi() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    requires = pyproject["build-system"]["requires"]
    assert any(re.fullmatch(r"setuptools>=(\d+)", r) and int(r.split(">=")[1]) >= 77 for r in requires)
    project = pyproject["project"]
    assert "Typing :: Typed" in project["classifiers"]
    assert set(project["urls"]) == {"Homepage", "Repository", "Documentation", "Issues", "Changelog"}
    assert all(url.startswith("https://github.com/shardls/shardls") for url in project["urls"].values())
    assert (ROOT / "shardls" / "py.typed").exists()
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["shardls"]
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert f"## {project['version']}" in changelog


def test_the_readme_image_is_absolute_and_names_a_file_of_the_repository() -> None:
    """PyPI and the marketplace show the README away from the repository: a relative image breaks."""
    readme = (ROOT / "README.md").read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme)
    prefix = "https://raw.githubusercontent.com/shardls/shardls/main/"
    assert images and all(image.startswith(prefix) for image in images)
    assert all((ROOT / image.removeprefix(prefix)).is_file() for image in images)
    assert "## Install" in readme


# -- the getting-started Neovim snippet on Neovim 0.7 ---------------------------------------------

_WAIT_FOR_DIAGNOSTICS = """
-- After start-up: the file named on the command line is open, as `nvim model.py` opens it.
vim.api.nvim_create_autocmd('VimEnter', { callback = function()
  local arrived = vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 100)
  local lines = { arrived and 'arrived' or 'timeout' }
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(lines, tostring(d.code) .. ' ' .. d.message)
  end
  vim.fn.writefile(lines, vim.env.SHARDLS_RESULT)
  vim.cmd('qa!')
end })
"""


def test_the_getting_started_neovim_snippet_runs_on_neovim_0_7(tmp_path: Path) -> None:
    """Debian bookworm's Neovim is 0.7.2, which has no `vim.lsp.start`: the guide's snippet must
    start the server and show its diagnostics there."""
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.fail("nvim is not installed: `apt-get install -y neovim` (python3 dev.py test does it)")
    guide = (ROOT / "docs" / "getting-started.md").read_text()
    (snippet,) = _fenced(guide, "lua")
    command = '{ "shardls", "serve" }'
    assert command in snippet
    server = (
        "{ " + ", ".join(json.dumps(part) for part in [sys.executable, "-I", "-m", "shardls", "serve"]) + " }"
    )
    init = tmp_path / "init.lua"
    init.write_text(snippet.replace(command, server) + _WAIT_FOR_DIAGNOSTICS)
    (tmp_path / "model.py").write_text(BAD)
    result = tmp_path / "result.txt"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "XDG_", "NVIM"))},
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "SHARDLS_RESULT": str(result),
    }
    version = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=HANG_S, check=True)

    done = subprocess.run(
        [nvim, "--headless", "-u", str(init), "model.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
        check=False,
    )

    assert result.exists(), f"{version.stdout.splitlines()[0]}: {done.stdout}{done.stderr}"
    lines = result.read_text().splitlines()
    assert lines[0] == "arrived", lines
    assert any(line.startswith("SH001 dimension 0 of [50257, 1024]") for line in lines[1:]), lines
