"""JAX as the judge of the jit and shard_map analysis: tagged programs, run under real JAX.

The programs use the corpus tags (see jax_oracle.py): ``# expect: name`` asks for the value of
`name` after the statement, ``# expect-error: CODE`` says JAX raises there. jax_oracle runs them on
8 fake CPU devices in one subprocess and reports what JAX saw; this module compares that with the
sites and diagnostics of shardls:

* a value traced inside a jitted or shard_mapped function (the shape the function body sees):
  the site on the statement with that name, else the JIT_IN/SHARD_MAP_IN sites of the parameter
  (for shard_map, the per-device block; for jit, the global argument);
* an array (or ShapeDtypeStruct) after a call: the site of that name on the statement must have
  JAX's global shape and per-device shape;
* ``expect-error``: JAX raised there and shardls reports an error with that code on the statement;
  shardls reports no error anywhere else, and JAX raised nowhere else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jax_oracle import Tag, parse_tags, run_oracle

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis, SiteKind
from shardls.analysis.workspace import Workspace
from shardls.core import Severity

_INSIDE = {SiteKind.JIT_IN: "shape", SiteKind.SHARD_MAP_IN: "shard_shape"}
"""What a parameter's site says about the value inside the function."""


def judge(programs: dict[str, str], directory: Path) -> dict[str, list[str]]:
    """Every program's disagreements between JAX and shardls (empty when they agree)."""
    paths = {}
    for name, text in programs.items():
        paths[name] = directory / f"{name}.py"
        paths[name].write_text(text)
    results = run_oracle(list(paths.values()), directory)
    analyzer = Analyzer(Workspace([directory]))
    verdicts = {}
    for name, path in paths.items():
        result = results[path.name]
        if "fatal" in result:
            verdicts[name] = [f"JAX could not run the program: {result['fatal']}"]
            continue
        analysis = analyzer.analyze(str(path), path.read_text())
        verdicts[name] = _disagreements(parse_tags(path.read_text()), result, analysis)
    return verdicts


def _disagreements(tags: list[Tag], result: dict[str, Any], analysis: FileAnalysis) -> list[str]:
    problems = []
    for tag in tags:
        if tag.kind == "expect":
            for name in tag.items:
                problems += _value_problems(tag, name, result, analysis)
        else:
            problems += _error_problems(tag, result, analysis)
    error_tags = [t for t in tags if t.kind == "expect-error"]
    for error in result["errors"]:
        if error["line"] is None or not any(t.covers(error["line"]) for t in error_tags):
            problems.append(f"JAX raised where no error is tagged: {error}")
    for diagnostic in analysis.diagnostics:
        line = diagnostic.span.line
        if diagnostic.severity is Severity.ERROR and not any(t.covers(line) for t in error_tags):
            problems.append(f"line {line + 1}: shardls error {diagnostic.code} where JAX raised nothing")
    return problems


def _value_problems(tag: Tag, name: str, result: dict[str, Any], analysis: FileAnalysis) -> list[str]:
    where = f"line {tag.line + 1} `{name}`"
    captures = [c for c in result["captures"] if c["line"] == tag.line and c["name"] == name]
    if not captures:
        return [f"{where}: JAX never reached it"]
    on_statement = [
        s for s in analysis.sites if tag.covers(s.span.line) and s.name == name and s.shape is not None
    ]
    if captures[0]["kind"] == "traced":
        want = {tuple(c["shape"]) for c in captures}
        ours = {_dims(s.shape) for s in on_statement} or _inside(analysis, name)
        return [] if ours == want else [f"{where}: inside the function JAX sees {want}, shardls {ours}"]
    problems = []
    for capture in captures:
        want = (tuple(capture["shape"]), tuple(capture["shard_shape"]))
        ours = {(_dims(s.shape), _dims(s.shard_shape)) for s in on_statement}
        if ours != {want}:
            problems.append(f"{where}: JAX (global, per device) {want}, shardls {ours}")
    return problems


def _inside(analysis: FileAnalysis, name: str) -> set[tuple[int, ...] | None]:
    """The shapes the function body sees for parameter `name`, from the sites of its arguments
    whose layout JAX accepts (a call JAX rejects never reaches the body)."""
    found = set()
    for site in analysis.sites:
        attribute = _INSIDE.get(site.kind)
        if attribute is not None and site.name == name and site.layout is not None and site.layout.is_valid:
            found.add(_dims(getattr(site, attribute)))
    return found


def _error_problems(tag: Tag, result: dict[str, Any], analysis: FileAnalysis) -> list[str]:
    raised = [e for e in result["errors"] if e["line"] is not None and tag.covers(e["line"])]
    if not raised:
        return [f"line {tag.line + 1}: tagged {tag.kind} {tag.items}, but JAX raised nothing"]
    reported = {
        d.code for d in analysis.diagnostics if tag.covers(d.span.line) and d.severity is Severity.ERROR
    }
    missing = [code for code in tag.items if code not in reported]
    if missing:
        return [
            f"line {tag.line + 1}: JAX raised {raised[0]['type']}; shardls errors {reported}, not {missing}"
        ]
    return []


def _dims(shape: tuple[Any, ...] | None) -> tuple[int, ...] | None:
    return None if shape is None else tuple(d if isinstance(d, int) else -1 for d in shape)
