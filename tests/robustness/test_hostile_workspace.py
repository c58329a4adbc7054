"""A workspace is not trusted: links out of it, special files, huge files, hostile .gitignore
patterns and planted temporary files must never leak data, hang, exhaust memory or crash.

Every `check` here runs as a separate process with a hang limit (HANG) far beyond its normal
time, so that a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import random
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsp_helpers import (
    RecordingClient,
    hover_text,
    initialize,
    open_file,
    position_of,
    published,
    server_config,
)

from shardls.files import RefusedFile, discover, read_workspace_file
from shardls.globs import NameGlob, PatternSet
from shardls.memory import documents

HANG = 120
"""Seconds after which a `check` counts as hung (it takes about one)."""
SECRET = "SHARDLS_TEST_SECRET_4471"
MODEL = "import jax\nmesh = jax.make_mesh((2, 4), ('data', 'model'))\n"

posix_only = pytest.mark.skipif(os.name != "posix", reason="links, FIFOs and procfs are POSIX")


def check(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shardls", "check", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=HANG,
        env={**os.environ, SECRET: "leaked-value"},
    )


def diagnostics(result: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    found: list[dict[str, object]] = json.loads(result.stdout)["diagnostics"]
    return found


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr + result.stdout
    assert "internal error" not in result.stderr
    assert result.returncode in (0, 1, 2)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


# -- links out of the workspace ----------------------------------------------------------------


@posix_only
@pytest.mark.parametrize("target", ["/proc/self/environ", "/proc/self/fd/0", "/dev/zero", "/etc/passwd"])
def test_a_link_out_of_the_workspace_is_refused_not_read(project: Path, target: str) -> None:
    if not os.path.exists(target):
        pytest.skip(f"{target} does not exist here")
    (project / "leak.py").symlink_to(target)
    result = check(project, ".", "--output-format", "json")
    no_traceback(result)
    assert SECRET not in result.stdout and "root:" not in result.stdout
    leak = [d for d in diagnostics(result) if str(d["path"]).endswith("leak.py")]
    assert [d["code"] for d in leak] == ["SH210"]
    assert "outside the workspace" in str(leak[0]["message"])
    explicit = check(project, "leak.py")
    no_traceback(explicit)
    assert SECRET not in explicit.stdout and "SH210" in explicit.stdout


@posix_only
def test_a_link_inside_the_workspace_is_followed(project: Path) -> None:
    (project / "alias.py").symlink_to(project / "model.py")
    assert read_workspace_file(project / "alias.py", [project]) == MODEL.encode()


@posix_only
def test_a_link_to_itself_and_a_loop_are_diagnosed(project: Path) -> None:
    (project / "self.py").symlink_to("self.py")
    (project / "a.py").symlink_to("b.py")
    (project / "b.py").symlink_to("a.py")
    result = check(project, ".", "--output-format", "json")
    no_traceback(result)
    found = {Path(str(d["path"])).name: d for d in diagnostics(result)}
    assert {name: found[name]["code"] for name in ("self.py", "a.py", "b.py")} == dict.fromkeys(
        ("self.py", "a.py", "b.py"), "SH210"
    )
    assert "symbolic link loop" in str(found["self.py"]["message"])


@posix_only
def test_an_import_through_a_link_out_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text(f"KEY = '{SECRET}'\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "lib.py").symlink_to(outside / "secret.py")
    with pytest.raises(RefusedFile, match="outside the workspace"):
        read_workspace_file(project / "lib.py", [project])


# -- special and huge files --------------------------------------------------------------------


@posix_only
@pytest.mark.parametrize("name", ["pyproject.toml", ".gitignore", "model.py", "shardls.toml"])
def test_a_fifo_never_blocks(project: Path, name: str) -> None:
    (project / name).unlink(missing_ok=True)
    os.mkfifo(project / name)
    (project / "other.py").write_text(MODEL)
    result = check(project, ".")
    no_traceback(result)


@posix_only
@pytest.mark.parametrize("name", ["pyproject.toml", ".gitignore", "model.py"])
def test_a_link_to_the_zero_device_is_not_read(project: Path, name: str) -> None:
    (project / name).unlink(missing_ok=True)
    (project / name).symlink_to("/dev/zero")
    result = check(project, ".")
    no_traceback(result)


def test_a_sparse_gigabyte_file_is_sh210_by_its_size(project: Path) -> None:
    with open(project / "huge.py", "wb") as handle:
        handle.truncate(2**30)
    result = check(project, "huge.py")
    no_traceback(result)
    assert "SH210" in result.stdout and "1,073,741,824 bytes" in result.stdout


def test_the_size_limit_is_a_parameter(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n" * 10)
    with pytest.raises(RefusedFile, match="up to 20"):
        read_workspace_file(tmp_path / "a.py", limit=20)
    assert read_workspace_file(tmp_path / "a.py", limit=60) == b"x = 1\n" * 10


def test_a_file_deleted_during_check_is_sh210(project: Path) -> None:
    from shardls.analysis.settings import Settings
    from shardls.cli.check_files import CheckJob, check_file

    gone = project / "gone.py"
    report = check_file(CheckJob(gone, "gone.py", Settings(), (project,)))
    assert [d.code for d in report.diagnostics] == ["SH210"]
    assert "No such file" in report.diagnostics[0].message
    assert report.internal_error is None


# -- configuration values that used to crash ---------------------------------------------------


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("optimizer = [1, 2]", "optimizer: expected one of"),
        ("x = " + "[" * 50_000 + "]" * 50_000, "nested too deeply"),
        ('default-mesh = "a=2,\\udcff=4"', "not valid TOML"),
    ],
)
def test_bad_configuration_is_one_line_error(project: Path, table: str, expected: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.shardls]\n{table}\n")
    result = check(project, "model.py")
    no_traceback(result)
    assert result.returncode == 2
    assert expected in result.stderr


def test_a_lone_surrogate_in_an_axis_name_is_no_crash(project: Path) -> None:
    (project / "model.py").write_text(
        MODEL + "from jax.sharding import NamedSharding, PartitionSpec as P\n"
        "import jax.numpy as jnp\n"
        "y = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P('\\udcff')))\n"
    )
    for args in ((), ("--output-format", "json"), ("--show-layouts",)):
        no_traceback(check(project, "model.py", *args))
    no_traceback(check(project, "model.py", "--mesh", "\udcff=8"))


# -- gitignore patterns ------------------------------------------------------------------------


def test_a_backtracking_pattern_matches_in_linear_time(tmp_path: Path) -> None:
    """`*a*a*a*a*a*a*a*ab` against 100 `a`s: exponential for a regular expression; the matcher
    only places 9 pieces, each found by one search."""
    patterns = PatternSet.parse(tmp_path, ["*a*a*a*a*a*a*a*ab", "**/**/**/**/**/**/**/x*y*z"])
    assert patterns.match(tmp_path / ("a" * 100), False) is None
    assert patterns.match(tmp_path / "/".join(["a"] * 200), False) is None
    assert patterns.match(tmp_path / ("a" * 100 + "b"), False) is True
    glob = NameGlob.parse("*a*a*a*a*a*a*a*ab")
    assert len(glob.pieces) == 9


def test_a_backtracking_gitignore_line_does_not_hang_check(project: Path) -> None:
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("*a*a*a*a*a*a*a*ab\n")
    (project / ("a" * 100 + ".py")).write_text(MODEL)
    result = check(project, ".")
    no_traceback(result)
    assert "2 files" in result.stdout


_ALPHABET = ["a", "b", "*", "?", "[ab]", "[!a]", "[a-b]", "**"]


@pytest.mark.parametrize("seed", range(5))
def test_name_globs_agree_with_fnmatch(seed: int) -> None:
    """Within one name (no `/`), gitignore's `*`, `?` and `[...]` are fnmatch's (`**` is `*`)."""
    rng = random.Random(seed)
    for _ in range(400):
        pattern = "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 7)))
        name = "".join(rng.choice("ab") for _ in range(rng.randint(0, 8)))
        reference = fnmatch.fnmatchcase(name, pattern.replace("**", "*"))
        assert NameGlob.parse(pattern).matches(name) is reference, (pattern, name)


def _reference_regex(pattern: str) -> re.Pattern[str]:
    """gitignore's path semantics as a (backtracking) regular expression, for small inputs."""
    anchored = "/" in pattern
    names = pattern.split("/")
    parts: list[str] = [] if anchored else ["(?:[^/]+/)*"]
    for index, name in enumerate(names):
        last = index == len(names) - 1
        if name == "**":
            parts.append("[^/]+(?:/[^/]+)*" if last and index else "(?:[^/]+/)*")
            continue
        body = fnmatch.translate(name.replace("**", "*"))[4:-3].replace(".*", "[^/]*")
        parts.append(body + ("" if last else "/"))
    return re.compile("".join(parts))


@pytest.mark.parametrize("seed", range(3))
def test_path_globs_agree_with_a_reference(seed: int) -> None:
    rng = random.Random(seed)
    names = ["a", "b", "*", "a*", "?", "**"]
    for _ in range(300):
        pattern = "/".join(rng.choice(names) for _ in range(rng.randint(1, 4)))
        if pattern == "**" or pattern.startswith("/"):
            continue
        path = "/".join(rng.choice(["a", "b", "ab"]) for _ in range(rng.randint(1, 5)))
        ours = PatternSet.parse(Path("/r"), [pattern]).match(Path("/r") / path, False) is True
        assert ours is (_reference_regex(pattern).fullmatch(path) is not None), (pattern, path)


def test_discovery_skips_fifos_and_honours_gitignore(project: Path) -> None:
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("gen_*.py\n")
    (project / "gen_x.py").write_text(MODEL)
    if os.name == "posix":
        os.mkfifo(project / "pipe.py")
    assert [p.name for p in discover([project])] == ["model.py"]


# -- temporary files ---------------------------------------------------------------------------


@posix_only
def test_the_memory_document_never_follows_a_planted_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    monkeypatch.setattr(documents, "_folder", None)
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched")
    (tmp_path / "shardls").mkdir()
    (tmp_path / "shardls" / "Net-memory.md").symlink_to(victim)
    written = documents.write_memory_document("Net", "# table\n")
    assert victim.read_text() == "untouched"
    assert written.read_text() == "# table\n"
    assert written.parent != tmp_path / "shardls"
    assert written.parent.stat().st_mode & 0o077 == 0
    # a link planted later in the private folder is not followed either
    written.unlink()
    written.symlink_to(victim)
    with pytest.raises(OSError):
        documents.write_memory_document("Net", "again")
    assert victim.read_text() == "untouched"


def test_a_hostile_model_name_stays_in_the_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(documents, "_folder", None)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    written = documents.write_memory_document("../../etc/x", "t")
    assert written.parent == documents.private_folder()


# -- the server ---------------------------------------------------------------------------------


@pytest_lsp.fixture(config=server_config(**{SECRET: "leaked-value"}))
async def client(lsp_client: RecordingClient) -> AsyncIterator[None]:
    yield
    await lsp_client.shutdown_session()


@posix_only
@pytest.mark.asyncio
async def test_the_server_answers_in_a_hostile_workspace(client: RecordingClient, tmp_path: Path) -> None:
    """Special files and links out of the workspace, where the server looks for the workspace's
    only mesh (the opened file builds none) and reads related files: it answers, reads none."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "train.py").write_text(MODEL)
    os.mkfifo(tmp_path / "pipe.py")
    os.mkfifo(tmp_path / ".gitignore")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "environ.py").symlink_to("/proc/self/environ")
    (tmp_path / "stdin.py").symlink_to("/proc/self/fd/0")
    (tmp_path / "self.py").symlink_to("self.py")
    await initialize(client, tmp_path)
    text = (
        "import jax.numpy as jnp\nfrom jax.sharding import PartitionSpec as P\n"
        "x = jax.device_put(jnp.zeros((9, 16)), P('data'))\n"
    )
    uri = open_file(client, tmp_path / "model.py", text, write=True)
    result = await published(client, uri)
    assert all(SECRET not in d.message for d in result.diagnostics)
    hover = await asyncio.wait_for(hover_text(client, uri, position_of(text, "P('data')")), HANG)
    assert hover is None or SECRET not in hover


@pytest.mark.asyncio
async def test_the_server_answers_about_a_lone_surrogate_axis(
    client: RecordingClient, tmp_path: Path
) -> None:
    """As an escape in the source (`P('\\udcff')`) it is an axis name like any other; as the
    character itself (only an editor can send it: it has no UTF-8) the statement is SH209."""
    await initialize(client, tmp_path)
    for index, axis in enumerate(["\\udcff", "\udcff"]):
        text = MODEL + (
            "import jax.numpy as jnp\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
            f"y = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P('{axis}')))\n"
        )
        uri = open_file(client, tmp_path / f"model{index}.py", text)
        result = await published(client, uri, lambda params: bool(params.diagnostics))
        assert [d.code for d in result.diagnostics] == (["SH005"] if index == 0 else ["SH209"])
        hover = await asyncio.wait_for(hover_text(client, uri, position_of(text, "P('")), HANG)
        assert index == 1 or hover is not None
