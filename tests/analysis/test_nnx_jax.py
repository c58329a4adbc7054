"""JAX is the judge of the NNX programs in `nnx_programs/`.

Each program runs under real Flax on 8 fake CPU devices (`jax_oracle`, one forked process per
program). Then:

* every parameter of every module tagged ``# expect: name`` must have a static site with the same
  global shape and per-device shape (parameters without an annotation need none: they must be
  unsharded);
* ``# expect-error: CODE`` marks a statement where JAX raises; shardls must report CODE there;
* ``# expect-warning: CODE`` marks a statement JAX runs without error; shardls must report CODE
  there (e.g. SH208: the stacked layout is silently wrong);
* JAX raises nowhere else, and shardls reports no other error.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jax_oracle import Tag, parse_tags, run_oracle

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis, Site, SiteKind
from shardls.core import Severity

PROGRAMS = Path(__file__).parent / "nnx_programs"
NAMES = sorted(p.name for p in PROGRAMS.glob("p*.py"))


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, Any]]:
    return run_oracle([PROGRAMS / name for name in NAMES], PROGRAMS)


@cache
def analysis(name: str) -> FileAnalysis:
    path = PROGRAMS / name
    return Analyzer().analyze(str(path), path.read_text())


def tags(name: str) -> list[Tag]:
    return parse_tags((PROGRAMS / name).read_text())


def name_pattern(site_name: str) -> re.Pattern[str]:
    """A site name as a suffix of Flax's parameter path: `layers[*].kernel` matches
    `model.layers.3.kernel`, `tower[1].kernel` only index 1."""
    parts = re.split(r"(\[\*\]|\[\d+\])", site_name)
    pattern = "".join(
        r"\.\d+" if part == "[*]" else rf"\.{part[1:-1]}" if part.startswith("[") else re.escape(part)
        for part in parts
    )
    return re.compile(rf"(^|\.){pattern}$")


def site_shapes(site: Site) -> tuple[tuple[object, ...], tuple[object, ...] | None]:
    return tuple(site.shape or ()), site.shard_shape


def matching_sites(sites: list[Site], path: str) -> list[Site]:
    return [s for s in sites if s.name and name_pattern(s.name).search(path)]


@pytest.mark.parametrize("name", NAMES)
def test_shapes_match_jax(name: str, verdicts: dict[str, dict[str, Any]]) -> None:
    verdict = verdicts[name]
    assert "fatal" not in verdict, verdict.get("fatal")
    result = analysis(name)
    sites = list(result.sites)
    checked = 0
    for capture in verdict["captures"]:
        assert capture["kind"] in ("module", "array"), capture
        arrays = (
            {f"{capture['name']}.{path}": array for path, array in capture["params"].items()}
            if capture["kind"] == "module"
            else {capture["name"]: capture}
        )
        for path, array in arrays.items():
            expected = (tuple(array["shape"]), tuple(array["shard_shape"]))
            found = {site_shapes(s) for s in matching_sites(sites, path)}
            if not found:
                assert expected[0] == expected[1], f"{name}: no site for sharded {path} {expected}"
                continue
            assert expected in found, f"{name}: {path}: JAX {expected}, shardls {sorted(map(str, found))}"
            checked += 1
    assert checked, f"{name}: nothing compared"


@pytest.mark.parametrize("name", NAMES)
def test_diagnostics_match_jax(name: str, verdicts: dict[str, dict[str, Any]]) -> None:
    verdict = verdicts[name]
    result = analysis(name)
    program_tags = [t for t in tags(name) if t.kind != "expect"]
    for error in verdict["errors"]:
        assert any(t.kind == "expect-error" and t.covers(error["line"]) for t in program_tags), (
            f"{name}: JAX raised at line {error['line'] + 1} where no error is expected: {error['message']}"
        )
    for tag in program_tags:
        raised = any(tag.covers(e["line"]) for e in verdict["errors"])
        assert raised == (tag.kind == "expect-error"), f"{name}: line {tag.line + 1}: JAX raised={raised}"
        for code in tag.items:
            assert any(d.code == code and tag.covers(d.span.line) for d in result.diagnostics), (
                f"{name}: line {tag.line + 1}: shardls did not report {code}"
            )
    for diagnostic in result.diagnostics:
        if diagnostic.severity is Severity.ERROR:
            assert any(diagnostic.code in t.items and t.covers(diagnostic.span.line) for t in program_tags), (
                f"{name}: unexpected {diagnostic.code} at line {diagnostic.span.line + 1}: {diagnostic.message}"
            )


def test_every_program_has_params() -> None:
    """The programs exercise what they claim: each has an NNX parameter site."""
    for name in NAMES:
        kinds = {site.kind for site in analysis(name).sites}
        assert SiteKind.PARAM in kinds or name.startswith("p12"), name
