"""`shardls check --fix` and `--diff`: the certain fixes are applied (or shown), what remains is
reported, and files are only ever written where they should be."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from check_helpers import GOOD, HEADER, put, write
from cli_helpers import run

from shardls.cli.fix_files import checked_folders, not_writable

SCALAR = HEADER + "s = jax.device_put(jnp.zeros(()), NamedSharding(mesh, P(None)))\n"
"""SH003 on line 6, whose fix (`P()`) is certain."""
FIXED_SCALAR = HEADER + "s = jax.device_put(jnp.zeros(()), NamedSharding(mesh, P()))\n"
TYPO = HEADER + put("z", "(8, 16)", "'data', 'modle'")
"""SH005: the rename to 'model' is a guess, applied only with --unsafe-fixes."""
UNUSED = "# shardls: device-count=8\n" + HEADER + "b = 1  # shardls: ignore[SH001]  # a note\n"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_fix_applies_certain_fixes_and_reports_what_remains(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write(tmp_path, {"scalar.py": SCALAR, "typo.py": TYPO, "unused.py": UNUSED})
    result = run(capsys, "check", "--fix", "--output-format", "concise", ".")
    assert (tmp_path / "scalar.py").read_text() == FIXED_SCALAR
    assert (tmp_path / "typo.py").read_text() == TYPO
    assert (tmp_path / "unused.py").read_text().endswith("b = 1  # a note\n")
    assert "Fixed 2 problems (1 remaining)." in result.err
    assert "SH005" in result.out and "SH003" not in result.out and "SH401" not in result.out
    assert result.code == 1  # the SH005 that remains is an error


def test_fix_exits_zero_when_nothing_remains(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(tmp_path, {"scalar.py": SCALAR})
    result = run(capsys, "check", "--fix", "scalar.py")
    assert result.code == 0, result.out
    assert "Fixed 1 problem (0 remaining)." in result.err


def test_unsafe_fixes_apply_a_single_guess(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(tmp_path, {"typo.py": TYPO})
    result = run(capsys, "check", "--fix", "--unsafe-fixes", "typo.py")
    assert (tmp_path / "typo.py").read_text() == TYPO.replace("'modle'", "'model'")
    assert result.code == 0


def test_diff_changes_nothing_and_exits_one(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(tmp_path, {"a.py": SCALAR, "b/c.py": SCALAR, "clean.py": FIXED_SCALAR})
    result = run(capsys, "check", "--diff", ".")
    assert (tmp_path / "a.py").read_text() == SCALAR and (tmp_path / "b/c.py").read_text() == SCALAR
    assert result.code == 1
    assert "--- a.py\n+++ a.py\n" in result.out and "--- b/c.py\n+++ b/c.py\n" in result.out
    assert "-s = jax.device_put(jnp.zeros(()), NamedSharding(mesh, P(None)))\n" in result.out
    assert "+s = jax.device_put(jnp.zeros(()), NamedSharding(mesh, P()))\n" in result.out
    assert "clean.py" not in result.out
    assert "Would fix 2 problems in 2 files." in result.err
    assert run(capsys, "check", "--diff", "clean.py").code == 0


def test_fix_keeps_line_endings_and_the_bom(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf" + SCALAR.replace("\n", "\r\n").encode()
    write(tmp_path, {"crlf.py": data})
    run(capsys, "check", "--fix", "crlf.py")
    assert (tmp_path / "crlf.py").read_bytes() == b"\xef\xbb\xbf" + FIXED_SCALAR.replace(
        "\n", "\r\n"
    ).encode()


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links")
def test_fix_never_writes_through_a_link(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(tmp_path, {"project/pyproject.toml": "", "project/other/target.py": SCALAR})
    (tmp_path / "project" / "link.py").symlink_to(tmp_path / "project" / "other" / "target.py")
    result = run(capsys, "check", "--fix", "project/link.py")
    assert (tmp_path / "project" / "other" / "target.py").read_text() == SCALAR
    assert (tmp_path / "project" / "link.py").is_symlink()
    assert "link.py: not fixed: it is a symbolic link" in result.err
    assert result.code == 1  # the SH003 is still there


@pytest.mark.skipif(sys.platform == "win32", reason="symbolic links")
def test_only_files_below_the_checked_folders_without_links_are_writable(tmp_path: Path) -> None:
    write(tmp_path, {"outside/target.py": SCALAR, "project/real.py": SCALAR})
    (tmp_path / "project" / "linked_dir").symlink_to(tmp_path / "outside", target_is_directory=True)
    roots = checked_folders([tmp_path / "project"])
    assert not_writable(tmp_path / "project" / "real.py", roots) is None
    assert "outside the paths" in str(not_writable(tmp_path / "project" / "linked_dir" / "target.py", roots))
    assert "outside the paths" in str(not_writable(tmp_path / "outside" / "target.py", roots))
    assert not_writable(tmp_path / "outside" / "target.py", checked_folders([tmp_path / "outside"])) is None


def test_fix_leaves_no_temporary_file_and_keeps_the_mode(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write(tmp_path, {"scalar.py": SCALAR})
    os.chmod(tmp_path / "scalar.py", 0o640)
    run(capsys, "check", "--fix", "--no-cache", "scalar.py")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scalar.py"]
    assert (tmp_path / "scalar.py").stat().st_mode & 0o777 == 0o640


def test_fix_and_diff_do_not_go_together(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(tmp_path, {"scalar.py": SCALAR})
    assert run(capsys, "check", "--fix", "--diff", "scalar.py").code == 2
    assert run(capsys, "check", "--unsafe-fixes", "scalar.py").code == 2
    assert (tmp_path / "scalar.py").read_text() == SCALAR


def test_fix_of_standard_input_prints_the_fixed_text(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    class Stdin(io.StringIO):
        buffer = io.BytesIO(SCALAR.encode())

    monkeypatch.setattr(sys, "stdin", Stdin())
    result = run(capsys, "check", "--fix", "-")
    assert result.out == FIXED_SCALAR
    assert result.code == 0


def test_a_check_without_fix_flags_does_not_load_the_fixes(tmp_path: Path) -> None:
    """Loading them is start-up time every check would pay, and most checks fix nothing."""
    (tmp_path / "good.py").write_text(GOOD)
    program = (
        "import sys\nfrom shardls.cli.main import main\n"
        f"main(['check', '--no-cache', '--quiet', {str(tmp_path / 'good.py')!r}])\n"
        "print('shardls.fixes' in sys.modules, 'shardls.cli.fix_files' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.splitlines()[-1] == "False False"
