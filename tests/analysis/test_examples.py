"""The examples/ directory: every good example runs under JAX and is clean for shardls, and every
mistake in examples/mistakes.py is rejected by JAX where shardls says it is.

The examples are what a newcomer reads first, so they must stay true: each good example is run as
a script on 8 fake CPU devices (all of them at once, in subprocesses), exactly as the README tells
people to run it. mistakes.py wraps each mistake in `jax_rejects(...)`, which prints the line JAX
raised from (and fails if JAX accepts it); those lines must be the ones tagged
``# expect-error: CODE``, and shardls must report that code there and no other error.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jax_oracle import ORACLE_ENV, Tag, parse_tags, shared_json

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis
from shardls.analysis.workspace import Workspace
from shardls.core import Severity

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GOOD = ["mlp_nnx.py", "transformer_logical.py", "shard_map_kernel.py", "fsdp_tp_training.py"]
MISTAKES = "mistakes.py"
TYPED = "explicit_attention.py"
"""Explicit mode: a block whose every array has a sharded type, and one tagged mistake that the
script itself checks JAX rejects."""
_REPORTED = re.compile(r"^line (\d+)( \(warning\))?: ", re.MULTILINE)


def run_examples() -> dict[str, dict[str, Any]]:
    """Every example run as a script, all at once (each imports JAX itself, as a user's run would)."""
    env = {**os.environ, **ORACLE_ENV}
    started = {
        name: subprocess.Popen(
            [sys.executable, str(EXAMPLES / name)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=EXAMPLES.parent,
        )
        for name in [*GOOD, MISTAKES, TYPED]
    }
    done = {}
    for name, process in started.items():
        out, err = process.communicate(timeout=240)
        done[name] = {"returncode": process.returncode, "stdout": out, "stderr": err}
    return done


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(EXAMPLES.glob("*.py")))).hexdigest()[:16]
    results: dict[str, dict[str, Any]] = shared_json(shared, f"examples-run-{digest}", run_examples)
    return results


def analyze(name: str) -> FileAnalysis:
    path = EXAMPLES / name
    return Analyzer(Workspace([EXAMPLES])).analyze(str(path), path.read_text())


def test_every_example_is_tested() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted([*GOOD, MISTAKES, TYPED])


@pytest.mark.parametrize("name", GOOD)
def test_good_example_runs(name: str, runs: dict[str, dict[str, Any]]) -> None:
    run = runs[name]
    assert run["returncode"] == 0, run["stderr"][-4000:]


@pytest.mark.parametrize("name", GOOD)
def test_good_example_is_clean(name: str) -> None:
    """JAX runs these examples, so an error diagnostic in them is a false alarm."""
    analysis = analyze(name)
    errors = [
        f"line {d.span.line + 1}: {d.code} {d.message}"
        for d in analysis.diagnostics
        if d.severity is Severity.ERROR
    ]
    assert not errors, "\n".join(errors)
    assert analysis.sites, "shardls found no sharded value at all in an example about sharding"


def _tags(kind: str, name: str = MISTAKES) -> list[Tag]:
    return [t for t in parse_tags((EXAMPLES / name).read_text()) if t.kind == kind]


def test_jax_rejects_each_mistake_where_tagged(runs: dict[str, dict[str, Any]]) -> None:
    run = runs[MISTAKES]
    assert run["returncode"] == 0, run["stderr"][-4000:]  # jax_rejects fails the script if JAX accepts one
    reported = [(int(m.group(1)) - 1, bool(m.group(2))) for m in _REPORTED.finditer(run["stdout"])]
    errors = [line for line, warning in reported if not warning]
    warnings = [line for line, warning in reported if warning]
    error_tags, warning_tags = _tags("expect-error"), _tags("expect-warning")
    assert len(errors) == len(error_tags) and all(
        any(t.covers(line) for t in error_tags) for line in errors
    ), f"JAX rejected lines {[e + 1 for e in errors]}; tagged {[t.line + 1 for t in error_tags]}"
    assert len(warnings) == len(warning_tags) and all(
        any(t.covers(line) for t in warning_tags) for line in warnings
    ), f"JAX deprecated lines {[w + 1 for w in warnings]}; tagged {[t.line + 1 for t in warning_tags]}"


@pytest.mark.parametrize("name", [MISTAKES, TYPED])
def test_shardls_reports_each_mistake(name: str) -> None:
    analysis = analyze(name)
    problems = []
    for tag in [*_tags("expect-error", name), *_tags("expect-warning", name)]:
        for code in tag.items:
            found = [d for d in analysis.diagnostics if d.code == code and tag.covers(d.span.line)]
            if tag.kind == "expect-error":
                found = [d for d in found if d.severity is Severity.ERROR]
            if not found:
                problems.append(f"line {tag.line + 1}: no {code}")
    error_tags = _tags("expect-error", name)
    for d in analysis.diagnostics:
        if d.severity is Severity.ERROR and not any(t.covers(d.span.line) for t in error_tags):
            problems.append(f"line {d.span.line + 1}: unexpected error {d.code} {d.message}")
    assert not problems, "\n".join(problems)


def test_the_explicit_mode_example_runs_and_every_array_has_its_type(runs: dict[str, dict[str, Any]]) -> None:
    run = runs[TYPED]
    assert run["returncode"] == 0, run["stderr"][-4000:]  # its asserts check JAX's types and error
    assert "JAX: ShardingTypeError: Contracting dimensions are sharded" in run["stdout"]
    typed = {s.name: s.jax_type for s in analyze(TYPED).sites if s.jax_type is not None and s.name}
    assert typed["scores"] == "float32[8@data,8@model,16,16]"
    assert typed["hidden"] == "float32[8@data,16,256@model]"
