"""The per-line site index the editor features look the cursor up in: for every line, the same
sites as scanning all of them, including calls that span more lines than are indexed."""

from __future__ import annotations

from pathlib import Path

from analysis_helpers import analyze

from shardls.analysis.facts import LONG_SITE_LINES, FileAnalysis, Site

EXAMPLES = Path(__file__).parents[2] / "examples"

LONG_CALL = (
    "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n\n"
    'mesh = jax.make_mesh((2, 4), ("data", "model"))\n'
    "x = jax.device_put(\n    jnp.zeros((8, 16)),\n"
    + "    # a long comment line\n" * (LONG_SITE_LINES + 10)
    + '    NamedSharding(mesh, P("data", "model")),\n)\n'
)


def scanned(analysis: FileAnalysis, line: int) -> list[Site]:
    return [
        site
        for site in (*analysis.sites, *analysis.names)
        if any(s is not None and s.line <= line <= s.end_line for s in (site.span, site.spec_span))
    ]


def test_index_equals_a_scan_on_every_line() -> None:
    analyses = [analyze(path.read_text(), path=str(path)) for path in sorted(EXAMPLES.glob("*.py"))]
    analyses.append(analyze(LONG_CALL))
    for analysis in analyses:
        assert analysis.sites
        every = (*analysis.sites, *analysis.names)
        last = max(max(s.span.end_line, s.spec_span.end_line if s.spec_span else 0) for s in every)
        for line in range(last + 2):
            found = sorted(map(id, analysis.sites_on(line)))
            assert found == sorted(map(id, scanned(analysis, line))), (analysis.path, line)


def test_a_long_call_is_found_on_its_middle_lines() -> None:
    analysis = analyze(LONG_CALL)
    middle = 6 + LONG_SITE_LINES // 2
    (site,) = [s for s in analysis.sites_on(middle) if s.span.line == 5]
    assert site.span.end_line - site.span.line > LONG_SITE_LINES


def test_diagnostics_by_lines_equal_a_scan() -> None:
    """The hover's lookup of the problems under a site: for every range of lines, the diagnostics
    that touch it, in file order, as a scan of all of them finds."""
    analyses = [analyze(path.read_text(), path=str(path)) for path in sorted(EXAMPLES.glob("*.py"))]
    analyses.append(analyze(LONG_CALL.replace("(8, 16)", "(7, 16)")))
    checked = 0
    for analysis in analyses:
        last = max((d.span.end_line for d in analysis.diagnostics), default=0)
        for first in range(last + 2):
            for end in (first, first + 1, first + LONG_SITE_LINES + 5):
                expected = [
                    d for d in analysis.diagnostics if d.span.line <= end and first <= d.span.end_line
                ]
                assert analysis.diagnostics_on(first, end) == expected, (analysis.path, first, end)
                checked += bool(expected)
    assert checked > 50


def _lookups(analysis: FileAnalysis, last: int) -> list[tuple[list[int], list[int]]]:
    return [
        ([id(s) for s in analysis.sites_on(line)], [id(d) for d in analysis.diagnostics_on(line, line)])
        for line in range(last + 2)
    ]


def test_lookups_made_from_the_last_analysis_equal_those_made_whole() -> None:
    """A server builds an edit's lookups from the last analysis' (`index_lines(previous)`): only
    the lines of the sites and diagnostics that came or went are made again. For a number
    changed, a site added, one removed, a long call edited, and an Enter (every site below it
    moves: made whole), each lookup is the one a fresh index gives, in the same order."""
    from shardls.analysis.analyzer import Analyzer

    base = (EXAMPLES / "mistakes.py").read_text() + "\n" + LONG_CALL.split("\n\n", 1)[1]
    lines = base.split("\n")
    edits = [
        base.replace("(8, 16)", "(7, 16)"),
        base.replace('"modle"', '"model"'),
        base + 'y = jax.device_put(jnp.zeros((6, 16)), NamedSharding(mesh, P("data")))\n',
        base.replace("(8, 16)", "(7, 16)"),
        base,
        "\n".join(lines[:3] + [""] + lines[3:]),
        base,
    ]
    analyzer = Analyzer()
    previous = analyzer.analyze("/virtual/m.py", base)
    previous.index_lines()
    assert len(previous.diagnostics) > 4 and len(previous.sites) > 4
    for text in edits:
        analysis = analyzer.analyze("/virtual/m.py", text)
        analysis.index_lines(previous)
        fresh = FileAnalysis(**{name: getattr(analysis, name) for name in analysis.__dataclass_fields__})
        last = len(text.split("\n"))
        assert _lookups(analysis, last) == _lookups(fresh, last), text[-200:]
        previous = analysis
