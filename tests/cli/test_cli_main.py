"""The `shardls` entry point: subcommands, --version, exit statuses and one-line usage errors."""

from __future__ import annotations

import subprocess
import sys

import pytest
from cli_helpers import run

import shardls

GOOD = ("layout", "--mesh", "data=2,model=4", "--shape", "8,12")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((*GOOD[:2], "data2", *GOOD[3:], "--spec", "data"), "argument --mesh: expected name=size"),
        ((*GOOD[:2], "", *GOOD[3:], "--spec", "data"), "the mesh needs at least one axis"),
        (
            (*GOOD[:2], "data=two", *GOOD[3:], "--spec", "data"),
            "the size of mesh axis 'data' must be an integer",
        ),
        ((*GOOD, "--spec", "P(None, 'model'"), "argument --spec: \"P(None, 'model'\" is not a PartitionSpec"),
        ((*GOOD, "--spec", "P(1)"), "argument --spec: expected an axis name such as 'data'; got '1'"),
        ((*GOOD, "--spec", "Q('data')"), "expected P(...) or PartitionSpec(...); got 'Q'"),
        ((*GOOD, "--spec", "P('a', unreduced=['b'])"), "expected a set of axis names"),
        ((*GOOD, "--spec", "P('a', other={'b'})"), "only takes the keywords unreduced= and reduced="),
        ((*GOOD, "--spec", "__import__('os').system('true')"), "expected P(...) or PartitionSpec(...)"),
        ((*GOOD, "--spec", "data", "--dtype", "floaty"), "argument --dtype: unknown dtype 'floaty'"),
        ((*GOOD, "--spec", "data", "--context", "pmap"), "argument --context: invalid choice: 'pmap'"),
        ((*GOOD, "--spec", "data", "--axis-types", "implicit"), "unknown axis type 'implicit'"),
        ((*GOOD, "--spec", "data", "--axis-types", "auto,auto,auto"), "--axis-types gives 3 types for the 2"),
        ((*GOOD, "--spec", "data", "--devices", "0"), "the device count must be at least 1"),
        ((*GOOD[:3], "--shape", "8,-1", "--spec", "data"), "dimensions cannot be negative"),
        ((*GOOD[:3], "--shape", "8,,2", "--spec", "data"), "empty item in '8,,2'"),
        (("layout", "--mesh", "data=-1", "--shape", "8", "--spec", "data"), "say how many devices fill it"),
        (GOOD, "the following arguments are required: --spec"),
        (("frobnicate",), "invalid choice: 'frobnicate'"),
        ((), "the following arguments are required: COMMAND"),
    ],
)
def test_bad_usage_is_one_line(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    result = run(capsys, *argv)
    assert result.code == 2
    assert result.out == ""
    assert result.err.count("\n") == 1, result.err
    assert result.err.startswith("shardls")
    assert message in result.err
    assert "Traceback" not in result.err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "--version")
    assert (result.code, result.out) == (0, f"shardls {shardls.__version__}\n")


def test_help_lists_layout(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "--help")
    assert result.code == 0
    assert "layout" in result.out
    layout_help = run(capsys, "layout", "--help")
    assert layout_help.code == 0
    assert "--axis-types" in layout_help.out


def _python_m(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", "-m", "shardls", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_python_m_shardls_layout() -> None:
    done = _python_m(*GOOD, "--spec", "P(None, 'model')")
    assert done.returncode == 0
    assert done.stderr == ""
    assert "per device  float32[8,3]" in done.stdout
    assert "│ dev 0, 4 │ dev 1, 5 │" in done.stdout


def test_python_m_shardls_exit_statuses() -> None:
    assert _python_m(*GOOD, "--spec", "None,modle").returncode == 1
    bad = _python_m(*GOOD, "--spec", "P(")
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr.startswith("shardls layout: error: argument --spec:")
    assert bad.stderr.count("\n") == 1


def test_reader_leaving_early_is_not_a_traceback() -> None:
    argv = [
        sys.executable,
        "-m",
        "shardls",
        "layout",
        "--mesh",
        "x=4096",
        "--shape",
        "8192",
        "--spec",
        "x",
        "--json",
    ]
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.read(1) == b"{"
        process.stdout.close()  # like `| head -c 1`
        stderr = process.stderr.read().decode()
        assert process.wait(timeout=60) == 1
    assert stderr == ""
