"""Every core problem reachable from `shardls layout`, in text and JSON, with its exit status."""

from __future__ import annotations

from typing import NamedTuple

import pytest
from cli_helpers import layout, layout_json

from shardls.core.rules import CORE_RULES


class Case(NamedTuple):
    args: tuple[str, ...]
    code: str
    severity: str
    exit_code: int
    fragment: str


def case(args: str, code: str, severity: str, fragment: str) -> Case:
    """`args` is a shell-like string with `|` between arguments (specs contain spaces)."""
    return Case(tuple(args.split("|")), code, severity, 1 if severity == "error" else 0, fragment)


MESH = "--mesh|data=2,model=4|"
CASES = [
    case(
        MESH + "--shape|8,10|--spec|None,model",
        "SH001",
        "error",
        "the nearest sizes that divide are 8 and 12",
    ),
    case(
        MESH + "--shape|8|--spec|data,model",
        "SH002",
        "error",
        "data,model has 2 entries but the array has rank 1",
    ),
    case(MESH + "--shape|8|--spec|data,None|--context|spec", "SH002", "warning", "shard_shape ignores it"),
    case(MESH + "--shape||--spec|P(None)", "SH003", "error", "on a scalar"),
    case(MESH + "--shape|8,12|--spec|data,data", "SH004", "error", "mesh axis 'data' is used more than once"),
    case(MESH + "--shape|8,12|--spec|P('modle')", "SH005", "error", "did you mean 'model'?"),
    case(
        MESH + "--shape|8,12|--spec|P(P.UNCONSTRAINED, 'model')|--axis-types|explicit|--context|wsc",
        "SH006",
        "error",
        "P.UNCONSTRAINED needs an Auto mesh axis",
    ),
    case(MESH + "--shape|6,12|--spec|model|--context|wsc", "SH007", "warning", "pads every shard to 2"),
    case(
        MESH + "--shape|8,12|--spec|P(P.UNCONSTRAINED, 'model')", "SH008", "error", "KeyError: UNCONSTRAINED"
    ),
    case(MESH + "--shape|8,12|--spec|P('model', unreduced={'data'})", "SH009", "error", "must be Explicit"),
    case(
        MESH + "--shape|8,12|--spec|P('model', unreduced={'model'})|--axis-types|explicit",
        "SH010",
        "error",
        "both a partition",
    ),
    case(MESH + "--shape|8,12|--spec|model|--context|reshard", "SH011", "error", "'model' is Auto"),
    case(
        MESH + "--shape|8,12|--spec|model|--context|param|--axis-types|explicit,auto",
        "SH012",
        "error",
        "this mesh mixes data: Explicit, model: Auto",
    ),
    case(
        MESH + "--shape|8,12|--spec|model|--context|wsc|--axis-types|explicit",
        "SH013",
        "warning",
        "only asserts",
    ),
    case("--mesh|data=2,data=4|--shape|8|--spec|data", "SH101", "error", "'data' is used twice"),
    case("--mesh|data=0,model=4|--shape|8|--spec|model", "SH103", "error", "has size 0"),
    case(MESH + "--shape|8,12|--spec|model|--devices|4", "SH104", "error", "needs 8 devices, but only 4"),
    case(
        "--mesh|data=4,model=-1|--devices|6|--shape|8|--spec|data",
        "SH106",
        "error",
        "6 devices are not divisible",
    ),
    case("--mesh|a=-1,b=-1|--devices|8|--shape|8|--spec|a", "SH109", "error", "only one mesh size can be -1"),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.code}-{c.severity}" for c in CASES])
def test_problem_in_text(capsys: pytest.CaptureFixture[str], case: Case) -> None:
    result = layout(capsys, *case.args)
    assert result.code == case.exit_code
    assert result.err == ""
    line = next(line for line in result.out.splitlines() if f" {case.code} " in line)
    assert line.startswith(f"{case.severity} {case.code} {CORE_RULES[case.code].name}: ")
    assert case.fragment in line


@pytest.mark.parametrize("case", CASES, ids=[f"{c.code}-{c.severity}" for c in CASES])
def test_problem_in_json(capsys: pytest.CaptureFixture[str], case: Case) -> None:
    exit_code, out = layout_json(capsys, *case.args)
    assert exit_code == case.exit_code
    problem = next(p for p in out["problems"] if p["code"] == case.code)
    assert problem["name"] == CORE_RULES[case.code].name
    assert problem["severity"] == case.severity
    assert case.fragment in problem["message"]
    assert (out["shard_shape"] is None) == (case.severity == "error" and case.code != "SH104")


def test_indivisible_data(capsys: pytest.CaptureFixture[str]) -> None:
    _, out = layout_json(capsys, "--mesh", "data=2,model=4", "--shape", "8,10", "--spec", "None,model")
    (problem,) = out["problems"]
    assert problem["data"] == {
        "dim": 1,
        "size": 10,
        "factor": 4,
        "axes": ["model"],
        "nearest": [8, 12],
        "alternatives": [["data"]],
    }
    assert out["total_bytes"] is None
    assert "devices" not in out


def test_unknown_axis_suggestion_data(capsys: pytest.CaptureFixture[str]) -> None:
    _, out = layout_json(capsys, "--mesh", "data=2,model=4", "--shape", "8", "--spec", "modle")
    assert out["problems"][0]["data"] == {"axis": "modle", "suggestion": "model"}


def test_padded_layout_is_valid(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--mesh", "data=2,model=4", "--shape", "6,12", "--spec", "model", "--context", "wsc")
    _, out = layout_json(capsys, *args)
    assert (out["shard_shape"], out["padded"]) == ([2, 12], True)
    assert out["devices"][3]["index"] == [[6, 6], None]
    assert "per device  float32[2,12]  (padded: the shards are uneven)" in layout(capsys, *args).out


def test_broken_mesh_has_no_layout(capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--mesh", "data=4,model=-1", "--devices", "6", "--shape", "8", "--spec", "data")
    _, out = layout_json(capsys, *args)
    assert out["mesh"] == {"data": 4, "model": -1}
    assert [p["code"] for p in out["problems"]] == ["SH106"]
    for key in ("shard_shape", "num_distinct_shards", "copies", "bytes_per_device", "jax_type"):
        assert out[key] is None
    text = layout(capsys, *args).out
    assert text.startswith("mesh        data=4, model=-1\nspec        data  = P('data')\n\nno layout:")


def test_rejected_layout_text(capsys: pytest.CaptureFixture[str]) -> None:
    out = layout(capsys, "--mesh", "data=2,model=4", "--shape", "8,10", "--spec", "None,model").out
    assert "per device  none: JAX rejects this layout" in out
    assert "┌" not in out
