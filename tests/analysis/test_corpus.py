"""The corpus against JAX: every tagged site and error of tests/corpus/, judged by running it.

Each program under tests/corpus/ is run under real JAX on 8 fake CPU devices (jax_oracle.py, one
subprocess for the whole corpus) and analysed statically by shardls; the two must agree:

* every ``# expect: name`` site: shardls finds a site of that name on the statement, with JAX's
  per-device shard shape (for an NNX module: every parameter, by path);
* every ``# expect-error: CODE`` statement: JAX raised there, and shardls reports an error with
  that code on it;
* every ``# expect-warning: CODE`` statement: JAX accepted it, and shardls reports that code;
* every ``# expect-uses: x, y`` statement (a NamedSharding built on its own): JAX laid out the
  arrays ``x`` and ``y`` with the sharding built there, and shardls's site of it lists them as
  its uses, with their global and per-device shape when JAX gave them one between them (and
  none when they differ);
* no error-level diagnostic anywhere else, since JAX accepted (or never reached) those lines.

`test_tags_agree_with_jax` keeps the corpus honest (a tag JAX contradicts is a corpus bug), and
`test_analysis_agrees_with_jax` judges shardls. Programs that need an analyzer feature which does
not exist yet are marked xfail(strict=True) in XFAIL, so they turn red the day the feature lands.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from jax_oracle import BUILT, Tag, parse_tags, run_oracle, shared_json

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis, Site, SiteKind
from shardls.analysis.settings import Settings
from shardls.analysis.workspace import Workspace
from shardls.core import Severity

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
ORACLE = Path(__file__).with_name("jax_oracle.py")
MIN_PROGRAMS = 40

XFAIL: dict[str, str] = {}
"""Program (relative to tests/corpus) -> the analyzer feature it needs that is not implemented yet."""

_SHAPELESS = (SiteKind.SPEC, SiteKind.NAMED_SHARDING)


def corpus_programs() -> list[str]:
    """Every program of the corpus, relative and POSIX-style (package `__init__.py` files excluded)."""
    return sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.py") if p.name != "__init__.py")


PROGRAMS = corpus_programs()


def _marked(programs: list[str]) -> list[Any]:
    return [
        pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=XFAIL[p])) if p in XFAIL else p
        for p in programs
    ]


# -- running JAX once per session, shared by xdist workers --------------------------------------


def _fingerprint() -> str:
    """Changes whenever a program (or a config file it reads), the oracle or the JAX/Flax version changes."""
    digest = hashlib.sha256()
    read = [*PROGRAMS, *(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("__init__.py"))]
    for name in [*read, *sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.yml"))]:
        digest.update(name.encode() + b"\0" + (CORPUS / name).read_bytes())
    digest.update(ORACLE.read_bytes())
    digest.update(f"{metadata.version('jax')} {metadata.version('flax')}".encode())
    return digest.hexdigest()[:16]


def shared_directory(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory all xdist workers of this test session share (the session's own otherwise)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def jax_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """What JAX did in every program: run once per test session, however many xdist workers."""
    results: dict[str, dict[str, Any]] = shared_json(
        shared_directory(tmp_path_factory),
        f"corpus-jax-{_fingerprint()}",
        lambda: run_oracle([CORPUS / p for p in PROGRAMS], CORPUS),
    )
    return results


@pytest.fixture(scope="session")
def analyzer() -> Analyzer:
    return Analyzer(Workspace([CORPUS]))


ORACLE_DEVICES = Settings(device_count=8, device_count_source="--device-count")
"""JAX runs the programs on 8 devices; shardls is told so, as a user states the count of their
machine. Unstated, the count is an assumption and its problems would be warnings."""


def analyze(analyzer: Analyzer, program: str) -> FileAnalysis:
    path = CORPUS / program
    return analyzer.analyze(str(path), path.read_text(), ORACLE_DEVICES)


# -- comparison ------------------------------------------------------------------------------------


def _captures(result: dict[str, Any], tag: Tag, name: str) -> list[dict[str, Any]]:
    return [c for c in result["captures"] if c["line"] == tag.line and c["name"] == name]


def _captured_anywhere(result: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The values JAX captured for `name` at its own `# expect:` tags."""
    return [c for c in result["captures"] if c["name"] == name and c["kind"] in ("array", "abstract")]


def _errors_in(result: dict[str, Any], tag: Tag) -> list[dict[str, Any]]:
    return [e for e in result["errors"] if e["line"] is not None and tag.covers(e["line"])]


def corpus_problems(program: str, result: dict[str, Any]) -> list[str]:
    """Where the tags of a program contradict what JAX did (the corpus is wrong, not shardls)."""
    if "fatal" in result:
        return [f"the program could not run: {result['fatal']}"]
    tags = parse_tags((CORPUS / program).read_text())
    problems = []
    for tag in tags:
        where = f"line {tag.line + 1}"
        if tag.kind == "expect":
            for name in tag.items:
                seen = _captures(result, tag, name)
                kinds = {c["kind"] for c in seen}
                if not seen:
                    problems.append(f"{where}: JAX never reached `{name}`")
                elif kinds & {"other", "capture-error", "sharding"}:
                    problems.append(f"{where}: `{name}` is not a sharded value: {seen[0]}")
                elif len(kinds) > 1:
                    problems.append(f"{where}: `{name}` took values of several kinds {sorted(kinds)}")
        elif tag.kind == "expect-uses":
            problems.extend(_uses_problems(result, tag, where))
        elif tag.kind == "expect-error" and not _errors_in(result, tag):
            problems.append(f"{where}: tagged expect-error {tag.items} but JAX accepted it")
        elif tag.kind == "expect-warning" and _errors_in(result, tag):
            problems.append(f"{where}: tagged expect-warning but JAX raised {_errors_in(result, tag)}")
    error_tags = [t for t in tags if t.kind == "expect-error"]
    for error in result["errors"]:
        line = error["line"]
        if line is None or not any(t.covers(line) for t in error_tags):
            shown = "?" if line is None else line + 1
            problems.append(f"line {shown}: JAX raised {error['type']}: {error['message'][:300]} (untagged)")
    return problems


def _uses_problems(result: dict[str, Any], tag: Tag, where: str) -> list[str]:
    """Whether JAX laid out each array an `expect-uses` tag names with a sharding built there."""
    built = {c.get("sharding") for c in _captures(result, tag, BUILT)}
    if not built:
        return [f"{where}: JAX never built the sharding"]
    if None in built:
        return [f"{where}: what is built there is not a NamedSharding"]
    problems = []
    for name in tag.items:
        seen = _captured_anywhere(result, name)
        if not seen:
            problems.append(f"{where}: `{name}` has no `# expect: {name}` tag JAX reached")
        elif any(c["sharding"] not in built for c in seen):
            problems.append(f"{where}: JAX laid out `{name}` with another sharding: {seen[0]['sharding']}")
    return problems


def uses_problems(analysis: FileAnalysis, result: dict[str, Any], tag: Tag) -> list[str]:
    """shardls's NamedSharding sites on an `expect-uses` statement against what JAX did: each
    named array is a use of one of them, and a site takes a shape exactly when the arrays it
    meets have one global and one per-device shape under JAX."""
    where = f"line {tag.line + 1}"
    built = [s for s in analysis.sites if s.kind is SiteKind.NAMED_SHARDING and tag.covers(s.span.line)]
    if not built:
        return [f"{where}: no named_sharding site on the statement"]
    problems = []
    for name in tag.items:
        if not any(use.name == name for site in built for use in site.uses):
            listed = [[(u.name, u.span.line + 1) for u in site.uses] for site in built]
            problems.append(f"{where}: `{name}` is not among the uses {listed}")
    for site in built:
        strangers = [
            (u.name, u.span.line + 1) for u in site.uses if u.shape is not None and u.name not in tag.items
        ]
        if strangers:
            problems.append(f"{where}: shardls lists uses the tag does not name: {strangers}")
            continue
        want = {
            (_shown(c["shape"]), _shown(c["shard_shape"]))
            for use in site.uses
            if use.shape is not None  # a use whose shape is not known adds nothing
            for c in _captured_anywhere(result, use.name or "")
        }
        ours = (_shown(site.shape), _shown(site.shard_shape))
        if len(want) == 1 and {ours} != want:
            problems.append(f"{where}: JAX gives its uses {sorted(want)}, shardls {ours}")
        if len(want) > 1 and site.shape is not None:
            problems.append(f"{where}: its uses have the shapes {sorted(want)}, shardls took {ours}")
    return problems


def _name_matches(site_name: str | None, wanted: str) -> bool:
    if site_name is None:
        return False
    return site_name == wanted or wanted.rsplit(".", 1)[-1] == site_name


def _outermost(sites: list[Site]) -> Site:
    """The site whose call encloses the others: the value the statement finally binds."""
    return min(sites, key=lambda s: (s.span.line, s.span.column, -s.span.end_line, -s.span.end_column))


def _shown(shape: Any) -> str:
    return "None" if shape is None else "(" + ", ".join(str(getattr(d, "name", d)) for d in shape) + ")"


_PLACEMENTS = (SiteKind.DEVICE_PUT, SiteKind.RESHARD, SiteKind.CONSTRAINT)
_LIFTED = (SiteKind.JIT_IN, SiteKind.JIT_OUT, SiteKind.SHARD_MAP_IN)
"""Sites of an NNX transform's shardings, one per variable of a module passed or returned, named
after the function's parameter (or the result's name) and the variable's path (`m.kernel`)."""


def _param_sites(analysis: FileAnalysis, tag: Tag, owner: str) -> list[Site]:
    """The PARAM sites of the statement (else of the program); for a module placed whole on the
    statement (`emb = reshard(emb, P("X"))`), its placement sites, one per variable, named after
    their path (`emb['embedding']`); for a module an NNX transform lays out on the statement
    (`constrain(model)`, `made = make()`), its variables' sites, renamed after the module."""
    placed = [
        s
        for s in analysis.sites
        if s.kind in _PLACEMENTS and tag.covers(s.span.line) and (s.name or "").startswith(owner + "[")
    ]
    lifted = [
        dataclasses.replace(s, name=owner + "." + (s.name or "").split(".", 1)[1])
        for s in analysis.sites
        if s.kind in _LIFTED and tag.covers(s.span.line) and "." in (s.name or "")
    ]
    if placed or lifted:
        return placed + lifted
    params = [s for s in analysis.sites if s.kind is SiteKind.PARAM]
    on_statement = [s for s in params if tag.covers(s.span.line)]
    return on_statement or params


def _param_matches(site_name: str | None, path: str, owner: str) -> bool:
    """JAX's parameter path `up.kernel` against a site name: `up.kernel`, the tail of a longer path
    (`blocks.up.kernel`), prefixed with the tagged variable (`layer.kernel` for `layer = nnx.Linear(...)`),
    or the tagged variable's placed leaf (`model['up']['kernel']`)."""
    if site_name is None:
        return False
    if site_name.startswith(owner + "["):
        steps = re.findall(r"\[(?:'([^']*)'|(\d+))\]", site_name[len(owner) :])
        return path == ".".join(key or index for key, index in steps)
    if site_name.startswith(owner + "."):
        site_name = site_name[len(owner) + 1 :]
    return path == site_name or path.endswith("." + site_name)


def site_problems(analysis: FileAnalysis, tag: Tag, name: str, captures: list[dict[str, Any]]) -> list[str]:
    """shardls against the values JAX captured for one tagged name.

    A statement inside a function runs once per call, so JAX may capture several layouts; the
    analysis sees the function once per call site too, so the *sets* of shard shapes must match.
    """
    where = f"line {tag.line + 1} `{name}`"
    if captures[0]["kind"] == "module":
        problems = []
        sites = _param_sites(analysis, tag, name)
        for path, first in captures[0]["params"].items():
            want = {_shown(c["params"][path]["shard_shape"]) for c in captures if path in c["params"]}
            found = [s for s in sites if _param_matches(s.name, path, name)]
            ours = {_shown(s.shard_shape) for s in found}
            if not found and first["shard_shape"] == first["shape"]:
                continue  # replicated and (usually) unannotated: nothing the analysis must show
            if not found:
                problems.append(f"{where}: no PARAM site for `{path}` (JAX: shard {sorted(want)})")
            elif ours != want:
                problems.append(f"{where}: param `{path}` shard JAX {sorted(want)}, shardls {sorted(ours)}")
        return problems
    candidates = [
        s
        for s in analysis.sites
        if tag.covers(s.span.line) and s.kind not in _SHAPELESS and _name_matches(s.name, name)
    ]
    if captures[0]["kind"] == "traced" and not candidates:
        candidates = [s for s in analysis.sites if s.kind is SiteKind.SHARD_MAP_IN and s.name == name]
    want = {_shown(c["shard_shape"] if "shard_shape" in c else c["shape"]) for c in captures}
    if not candidates:
        nearby = [(s.kind.value, s.name) for s in analysis.sites if tag.covers(s.span.line)]
        return [f"{where}: no site (JAX: shard {sorted(want)}); sites on the statement: {nearby}"]
    outer = _outermost(candidates)
    sites = [s for s in candidates if s.span == outer.span]
    ours = {_shown(s.shard_shape) for s in sites}
    if ours != want:
        specs = sorted({str(s.spec.original if s.spec is not None else None) for s in sites})
        return [f"{where}: shard JAX {sorted(want)}, shardls {sorted(ours)} ({outer.kind.value}, {specs})"]
    return []


def analysis_problems(program: str, result: dict[str, Any], analysis: FileAnalysis) -> list[str]:
    """Where shardls disagrees with JAX about one program."""
    tags = parse_tags((CORPUS / program).read_text())
    problems = []
    for tag in tags:
        if tag.kind == "expect":
            for name in tag.items:
                seen = _captures(result, tag, name)
                if seen:
                    problems.extend(site_problems(analysis, tag, name, seen))
            continue
        if tag.kind == "expect-uses":
            problems.extend(uses_problems(analysis, result, tag))
            continue
        on_statement = [d for d in analysis.diagnostics if tag.covers(d.span.line)]
        for code in tag.items:
            wanted = [d for d in on_statement if d.code == code]
            if tag.kind == "expect-error":
                wanted = [d for d in wanted if d.severity is Severity.ERROR]
            if not wanted:
                got = [(d.code, d.severity.value) for d in on_statement]
                jax_said = [f"{e['type']}: {e['message'][:160]}" for e in _errors_in(result, tag)]
                problems.append(
                    f"line {tag.line + 1}: expected {tag.kind.removeprefix('expect-')} {code}; "
                    f"shardls gave {got}; JAX: {jax_said}"
                )
    error_tags = [t for t in tags if t.kind == "expect-error"]
    for diagnostic in analysis.diagnostics:
        line = diagnostic.span.line
        if diagnostic.severity is Severity.ERROR and not any(t.covers(line) for t in error_tags):
            problems.append(
                f"line {line + 1}: error {diagnostic.code} where JAX raised nothing: {diagnostic.message}"
            )
    return problems


# -- the tests ---------------------------------------------------------------------------------------


def test_corpus_size() -> None:
    """The corpus is the regression net for every pattern the analyzer targets; keep it wide."""
    assert len(PROGRAMS) >= MIN_PROGRAMS
    untagged = [p for p in PROGRAMS if not parse_tags((CORPUS / p).read_text())]
    helpers = {p for p in untagged if "/" in p}  # modules that packages import, such as config.py
    assert not set(untagged) - helpers, "programs with no tag test nothing"


@pytest.mark.parametrize("program", PROGRAMS)
def test_tags_agree_with_jax(program: str, jax_results: dict[str, dict[str, Any]]) -> None:
    problems = corpus_problems(program, jax_results[program])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("program", _marked(PROGRAMS))
def test_analysis_agrees_with_jax(
    program: str, jax_results: dict[str, dict[str, Any]], analyzer: Analyzer
) -> None:
    result = jax_results[program]
    if "fatal" in result:
        pytest.fail(f"JAX could not run the program: {result['fatal']}")
    problems = analysis_problems(program, result, analyze(analyzer, program))
    assert not problems, "\n".join(problems)
