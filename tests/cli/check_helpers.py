"""Small projects on disk for `shardls check` and `shardls explain`, with obvious answers.

Every example module defines a 2×4 mesh on line 5 and puts one array on line 6, so a test can
say exactly where each diagnostic and layout must be.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import Run, run

HEADER = (
    "import jax\n"
    "import jax.numpy as jnp\n"
    "from jax.sharding import NamedSharding, PartitionSpec as P\n"
    "\n"
    "mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
)


def put(name: str, shape: str, spec: str) -> str:
    """`name = jax.device_put(jnp.zeros(shape), NamedSharding(mesh, P(spec)))`, one line."""
    return f"{name} = jax.device_put(jnp.zeros({shape}), NamedSharding(mesh, P({spec})))\n"


GOOD = HEADER + put("x", "(8, 16)", "'data'")
"""float32[8@data,16]: 4×16 per device, 256 bytes, 4 copies; no problem."""
BAD = HEADER + put("y", "(9, 16)", "'data'")
"""SH001 on line 6: 9 is not divisible by data=2."""
TYPO = HEADER + put("z", "(8, 16)", "'data', 'modle'")
"""SH005 on line 6: did you mean 'model'?"""


def column_of(source: str, text: str, line: int = 6) -> int:
    """The 1-based column where `text` starts on 1-based `line`."""
    return source.splitlines()[line - 1].index(text) + 1


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def notebook(*cells: tuple[str, str]) -> str:
    """nbformat 4 JSON from (cell_type, source) pairs."""
    return json.dumps(
        {
            "cells": [
                {"cell_type": kind, "metadata": {}, "source": source.splitlines(keepends=True)}
                for kind, source in cells
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> Run:
    return run(capsys, "check", *argv)


def check_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    result = check(capsys, "--output-format", "json", *argv)
    return result.code, json.loads(result.out)
