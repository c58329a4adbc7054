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
