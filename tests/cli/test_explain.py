"""`shardls explain FILE:LINE[:COL]`: the hover's text on the command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from check_helpers import BAD, GOOD, HEADER, column_of, notebook, put, write
from cli_helpers import Run, run

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import SiteKind
from shardls.cli.explain_cmd import Target, parse_target
from shardls.render.site_text import describe_site


@pytest.fixture(autouse=True)
def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"good.py": GOOD, "bad.py": BAD})


def explain(capsys: pytest.CaptureFixture[str], *argv: str) -> Run:
    return run(capsys, "explain", *argv)


def test_a_line_explains_its_outermost_site(capsys: pytest.CaptureFixture[str]) -> None:
    result = explain(capsys, "good.py:6")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[:7] == [
        "float32[8@data,16]  →  per device float32[4,16]",
        "2 distinct shards × 4 copies",
        "256 bytes per device, 2.0 KiB (2,048 bytes) over all 8 devices",
        "mesh: data=2, model=4 (8 devices, Explicit axes)",
        "from: make_mesh at line 5; the mesh of the NamedSharding",
        "spec: P('data')",
        "used in: device_put",
    ]
    assert "  dim 0 = 8: literal at line 6" in lines
    assert "│ dev 0-3 │ dev 4-7 │" in lines  # the device grid: one cell per distinct shard


def test_a_column_on_a_problem_lists_it(capsys: pytest.CaptureFixture[str]) -> None:
    result = explain(capsys, f"bad.py:6:{column_of(BAD, 'data')}")
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0] == "float32[9@data,16]  →  rejected by JAX (SH001)"
    assert lines[lines.index("problems:") + 1].startswith(
        "  error SH001 indivisible-dimension: dimension 0 of [9, 16]"
    )
    assert "dev 0" not in result.out  # no grid for a layout JAX rejects


def test_a_mesh_definition(capsys: pytest.CaptureFixture[str]) -> None:
    result = explain(capsys, "good.py:5:10")
    assert result.out.splitlines() == [
        "mesh: data=2, model=4 (8 devices, Explicit axes), named mesh",
        "from: make_mesh at line 5",
    ]
    assert result.code == 0


def test_nothing_there(capsys: pytest.CaptureFixture[str]) -> None:
    result = explain(capsys, "good.py:2")
    assert result.out == "nothing to explain there: no sharding site or mesh (sites start on line 6)\n"
    assert result.code == 1


def test_unknown_sizes_stay_symbolic(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(tmp_path, {"sym.py": HEADER + "def f(n):\n    " + put("w", "(n, 16)", "'model'")})
    lines = explain(capsys, "sym.py:7").out.splitlines()
    assert lines[:3] == [
        "float32[n@model,16]  →  per device float32[n/4,16]",
        "4 distinct shards × 2 copies",
        "memory depends on n",
    ]
    assert "  dim 0 = n: unknown (parameter 'n')" in lines
    assert not any(line.startswith("│") for line in lines)  # no grid with placeholder sizes


def test_notebook_positions_name_the_cell(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "nb.ipynb": notebook(
                ("code", HEADER), ("markdown", "x"), ("code", "\n" + put("x", "(8, 16)", "'data'"))
            )
        },
    )
    result = explain(capsys, "nb.ipynb:cell 3:2")
    assert result.out.splitlines()[0] == "float32[8@data,16]  →  per device float32[4,16]"
    assert explain(capsys, "nb.ipynb:2").code == 2  # a notebook position needs its cell


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("good.py", "expected FILE:LINE or FILE:LINE:COL"),
        ("good.py:0", "lines and columns count from 1"),
        ("good.py:99", "good.py has no line 99"),
        ("good.py:6:500", "line 6 has only"),
        ("missing.py:1", "missing.py: cannot read the file: No such file"),
        ("good.py:cell 2:1", "a notebook position names its cell"),
    ],
)
def test_bad_targets_exit_2(capsys: pytest.CaptureFixture[str], target: str, message: str) -> None:
    result = explain(capsys, target)
    assert (result.code, result.out) == (2, "")
    assert result.err.count("\n") == 1 and message in result.err


def test_target_syntax() -> None:
    assert parse_target("C:\\src\\m.py:12:5") == Target(Path("C:\\src\\m.py"), 12, 5, None)
    assert parse_target("a:b.py:3") == Target(Path("a:b.py"), 3, None, None)
    assert parse_target("nb.ipynb:cell 4:2:7") == Target(Path("nb.ipynb"), 2, 7, 4)


def test_markdown_for_the_hover(tmp_path: Path) -> None:
    analysis = Analyzer().analyze(str(tmp_path / "good.py"), GOOD)
    site = next(site for site in analysis.sites if site.name == "x" and site.kind is SiteKind.DEVICE_PUT)
    lines = describe_site(site, markdown=True)
    assert lines[0] == "`float32[8@data,16]`  →  per device `float32[4,16]`"
    assert "**spec**: `P('data')`" in lines
    fence = lines.index("```text")
    assert lines[fence + 1] == "Devices holding each shard (columns: dim 0 over data):"
    assert lines[fence + 2].startswith("┌")
    assert lines.index("```", fence + 1) < lines.index("**where the numbers come from**:")
