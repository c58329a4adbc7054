"""`shardls check` output formats and exit statuses, on one-line examples with obvious answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from check_helpers import BAD, GOOD, HEADER, TYPO, check, check_json, column_of, put, write

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.rules import ALL_RULES

SH001_MESSAGE = (
    "dimension 0 of [9, 16] has size 9, which mesh axis 'data' of size 2 (2 ways) does not divide; "
    "the nearest sizes that divide are 8 and 10"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, {"good.py": GOOD, "bad.py": BAD})
    return tmp_path


def test_concise(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    result = check(capsys, "--output-format", "concise")
    column = column_of(BAD, "'data'")
    assert result.out.splitlines() == [
        f"bad.py:6:{column}: SH001 {SH001_MESSAGE}",
        "Found 1 problem (1 error) in 1 of 2 files.",
    ]
    assert (result.code, result.err) == (1, "")


def test_full_shows_source_caret_hint_and_note(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    result = check(capsys, "bad.py")
    column = column_of(BAD, "'data'")
    source = BAD.splitlines()[5]
    assert result.out.splitlines() == [
        f"bad.py:6:{column}: SH001 {SH001_MESSAGE}",
        "  |",
        f"6 | {source}",
        f"  | {' ' * (column - 1)}^^^^^^ SH001",
        "  |",
        "  = help: resize dimension 0 to 8 or 10, or leave it unsharded (None in the spec)",
        "  = note: mesh defined here (bad.py:5:8)",
        "",
        "Found 1 problem (1 error) in 1 of 1 file.",
    ]
    assert result.code == 1


def test_full_hint_for_a_typo(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    write(project, {"typo.py": TYPO})
    result = check(capsys, "typo.py")
    assert "  = help: replace 'modle' with 'model'" in result.out.splitlines()
    indent = " " * (column_of(TYPO, "'modle'") - 1)
    assert f"  | {indent}^^^^^^^ SH005" in result.out


def test_clean_project_exits_0(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    result = check(capsys, "good.py")
    assert (result.code, result.out, result.err) == (0, "All checks passed (1 file).\n", "")


def test_warnings_alone_exit_0(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    write(project, {"broken.py": GOOD + "def f(:\n    pass\n"})
    result = check(capsys, "--output-format", "concise", "broken.py")
    assert result.out.startswith("broken.py:7:1: SH209 ")
    assert "(1 warning)" in result.out
    assert result.code == 0


def test_json_diagnostics(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    code, out = check_json(capsys)
    assert code == 1
    assert set(out) == {"diagnostics"}
    column = column_of(BAD, "'data'")
    assert out["diagnostics"] == [
        {
            "path": "bad.py",
            "cell": None,
            "line": 6,
            "column": column,
            "end_line": 6,
            "end_column": column + len("'data'"),
            "code": "SH001",
            "severity": "error",
            "message": SH001_MESSAGE,
        }
    ]


def test_json_layouts(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    write(project, {"symbolic.py": HEADER + "def f(n):\n    " + put("w", "(n, 16)", "'model'")})
    code, out = check_json(capsys, "--show-layouts")
    assert code == 1
    layouts = {(entry["path"], entry["line"]): entry for entry in out["layouts"]}
    assert layouts[("good.py", 6)] == {
        "path": "good.py",
        "cell": None,
        "line": 6,
        "column": 5,
        "kind": "device_put",
        "name": "x",
        "global_shape": [8, 16],
        "global_formula": ["8", "16"],
        "dtype": "float32",
        "spec": ["data"],
        "mesh": {"data": 2, "model": 4},
        "shard_shape": [4, 16],
        "shard_formula": ["4", "16"],
        "min_rank": None,
        "requires": [],
        "bytes_per_device": 256,
        "assumptions": [],
        "jax_type": "float32[8@data,16]",
        "sharding_from": ["data: device_put at line 6"],
        "uses": [],
    }
    rejected = layouts[("bad.py", 6)]
    assert (rejected["global_shape"], rejected["shard_shape"], rejected["bytes_per_device"]) == (
        [9, 16],
        None,
        None,
    )
    symbolic = layouts[("symbolic.py", 7)]
    assert (symbolic["global_shape"], symbolic["shard_shape"], symbolic["bytes_per_device"]) == (
        [None, 16],
        [None, 16],
        None,
    )
    assert (symbolic["global_formula"], symbolic["shard_formula"]) == (["n", "16"], ["n/4", "16"])
    assert symbolic["requires"] == [{"dim": 0, "size": None, "formula": "n", "axes": ["model"], "factor": 4}]


SHARED = HEADER + (
    "sharding = NamedSharding(mesh, P('data'))\n"
    "x = jax.device_put(jnp.zeros((8, 16)), sharding)\n"
    "y = jax.device_put(jnp.ones((8, 16)), sharding)\n"
    "both = NamedSharding(mesh, P('model'))\n"
    "a = jax.device_put(jnp.zeros((8, 16)), both)\n"
    "b = jax.device_put(jnp.zeros((16, 16)), both)\n"
)
"""Line 6 builds a sharding both uses of which agree on float32[8,16]; line 9 one whose uses differ."""


def test_json_layouts_of_a_named_sharding_are_its_uses(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    write(project, {"shared.py": SHARED})
    code, out = check_json(capsys, "--show-layouts", "shared.py")
    assert code == 0
    layouts = {(entry["line"], entry["kind"]): entry for entry in out["layouts"]}
    agreed, differ = layouts[(6, "named_sharding")], layouts[(9, "named_sharding")]
    assert (agreed["global_shape"], agreed["shard_shape"], agreed["bytes_per_device"]) == (
        [8, 16],
        [4, 16],
        256,
    )
    assert agreed["uses"] == [
        {
            "cell": None,
            "line": line,
            "column": 5,
            "kind": "device_put",
            "name": name,
            "global_shape": [8, 16],
            "global_formula": ["8", "16"],
            "dtype": "float32",
            "shard_shape": [4, 16],
            "shard_formula": ["4", "16"],
        }
        for name, line in (("x", 7), ("y", 8))
    ]
    assert (differ["global_shape"], differ["shard_shape"], differ["bytes_per_device"]) == (None, None, None)
    assert [(use["name"], use["global_shape"], use["shard_shape"]) for use in differ["uses"]] == [
        ("a", [8, 16], [2, 16]),
        ("b", [16, 16], [4, 16]),
    ]
    assert layouts[(7, "device_put")]["uses"] == []


def test_show_layouts_of_a_named_sharding_name_its_uses(
    capsys: pytest.CaptureFixture[str], project: Path
) -> None:
    write(project, {"shared.py": SHARED})
    lines = check(capsys, "--output-format", "concise", "--show-layouts", "shared.py").out.splitlines()
    assert lines[0] == (
        "shared.py:6:12: named_sharding sharding: float32[8@data,16] → per device float32[4,16] ×4 copies, "
        "256 B/device (meets x at line 7, y at line 8)"
    )
    assert lines[3] == (
        "shared.py:9:8: named_sharding both: P('model') on data=2, model=4 (shape not known here; rank ≥ 1; "
        "meets a at line 10: float32[8@model,16], b at line 11: float32[16@model,16])"
    )


def test_show_layouts_in_text(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    result = check(capsys, "--output-format", "concise", "--show-layouts")
    lines = result.out.splitlines()
    # Each file's layouts beside its own diagnostics, in line order: bad.py's layout, its
    # SH001, then good.py's layout (not every layout of every file first).
    assert lines[0] == "bad.py:6:5: device_put y: float32[9@data,16] → rejected by JAX (SH001)"
    assert lines[1].startswith("bad.py:6:62: SH001 ")
    assert lines[2] == (
        "good.py:6:5: device_put x: float32[8@data,16] → per device float32[4,16] ×4 copies, 256 B/device"
    )
    full = check(capsys, "--show-layouts", "good.py")
    assert full.out.splitlines()[0] == lines[2]


def test_github(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    write(project, {"odd,name.py": BAD})
    result = check(capsys, "--output-format", "github")
    column = column_of(BAD, "'data'")
    assert result.out.splitlines() == [
        f"::error file=bad.py,line=6,col={column},endLine=6,endColumn={column + 6},title=SH001::{SH001_MESSAGE}",
        f"::error file=odd%2Cname.py,line=6,col={column},endLine=6,endColumn={column + 6},title=SH001::"
        + SH001_MESSAGE,
    ]
    assert result.code == 1


def test_sarif(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    result = check(capsys, "--output-format", "sarif")
    assert result.code == 1
    document = json.loads(result.out)
    assert document["version"] == "2.1.0"
    assert "sarif" in document["$schema"]
    (run,) = document["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == list(ALL_RULES)
    assert rules[0]["helpUri"].endswith("docs/rules/SH001.md")
    assert rules[0]["defaultConfiguration"] == {"level": "error"}
    assert run["columnKind"] == "unicodeCodePoints"
    (found,) = run["results"]
    column = column_of(BAD, "'data'")
    assert found["ruleId"] == "SH001"
    assert rules[found["ruleIndex"]]["id"] == "SH001"
    assert (found["level"], found["message"]["text"]) == ("error", SH001_MESSAGE)
    location = found["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "bad.py", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {
        "startLine": 6,
        "startColumn": column,
        "endLine": 6,
        "endColumn": column + 6,
    }
    (related,) = found["relatedLocations"]
    assert related["message"]["text"] == "mesh defined here"
    assert related["physicalLocation"]["region"]["startLine"] == 5


def test_statistics(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    write(project, {"bad2.py": BAD, "typo.py": TYPO})
    result = check(capsys, "--statistics")
    assert result.out.splitlines() == [
        "2  SH001  indivisible-dimension  error",
        "1  SH005  unknown-mesh-axis      error",
    ]
    assert result.code == 1
    code, out = check_json(capsys, "--statistics")
    assert out == [
        {"code": "SH001", "name": "indivisible-dimension", "severity": "error", "count": 2},
        {"code": "SH005", "name": "unknown-mesh-axis", "severity": "error", "count": 1},
    ]


def test_select_and_ignore(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    write(project, {"typo.py": TYPO})
    assert check(capsys, "--ignore", "SH001", "--output-format", "concise").out.count("SH") == 1
    selected = check(capsys, "--select", "SH00", "--ignore", "SH005", "--output-format", "concise")
    assert [line.split()[1] for line in selected.out.splitlines()[:-1]] == ["SH001"]
    assert check(capsys, "--ignore", "SH0").code == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--select", "SH999"), "'SH999' is not a rule code or a prefix of one"),
        (("missing.py",), "missing.py: no such file or folder"),
        (("--output-format", "github", "--show-layouts"), "--show-layouts works with concise, full, json"),
        (("--output-format", "sarif", "--statistics"), "--statistics works with concise, full, json"),
        (("--device-count", "0"), "the device count must be at least 1"),
        (("--mesh", "data"), "expected name=size"),
        (("--config", "nowhere.toml"), "nowhere.toml: cannot read"),
    ],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], project: Path, argv: tuple[str, ...], message: str
) -> None:
    result = check(capsys, *argv)
    assert result.code == 2
    assert result.out == ""
    assert result.err.count("\n") == 1 and message in result.err


def test_sarif_uris_are_escaped(capsys: pytest.CaptureFixture[str], project: Path) -> None:
    write(project, {"my file.py": BAD})
    document = json.loads(check(capsys, "--output-format", "sarif", "my file.py").out)
    location = document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "my%20file.py", "uriBaseId": "%SRCROOT%"}


def test_a_file_shardls_failed_on_is_not_counted_as_passed(
    capsys: pytest.CaptureFixture[str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    analyze = Analyzer.analyze

    def failing_on_good(self: Analyzer, path: str, text: str, *args: Any, **kwargs: Any) -> Any:
        if path.endswith("good.py"):
            raise RuntimeError("a bug in shardls")
        return analyze(self, path, text, *args, **kwargs)

    monkeypatch.setattr(Analyzer, "analyze", failing_on_good)
    result = check(capsys, "--no-cache", "good.py")
    assert result.code == 2
    assert "internal error while analysing good.py" in result.err
    assert result.out.strip().endswith(
        "No problems found (1 file). 1 of them could not be checked (see the internal errors above)."
    )
    result = check(capsys, "--no-cache", "good.py", "bad.py")
    assert result.code == 2
    assert "in 1 of 2 files. 1 of them could not be checked (see the internal errors above)." in result.out
