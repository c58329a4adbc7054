"""Run `shardls` in-process and read what it printed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from shardls.cli.main import main

EXAMPLE_MESH = ("--mesh", "data=2,model=4")


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Run:
    code = main(list(argv))
    captured = capsys.readouterr()
    return Run(code, captured.out, captured.err)


def layout(capsys: pytest.CaptureFixture[str], *argv: str) -> Run:
    return run(capsys, "layout", *argv)


def layout_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    result = layout(capsys, *argv, "--json")
    assert result.err == ""
    return result.code, json.loads(result.out)
