"""What JAX rejects where a sharding is built (an unknown or repeated axis) is reported once, at
the `NamedSharding(...)` that builds it, where JAX raises; not again at each use, and also when
the sharding is passed to a call no recognizer handles."""

from __future__ import annotations

from pathlib import Path

from analysis_helpers import analyze, line_of, workspace

from shardls.analysis.facts import Diagnostic, FileAnalysis, SiteKind, Span
from shardls.analysis.file_diagnostics import reported
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.pragmas import Pragmas
from shardls.analysis.settings import Settings
from shardls.analysis.source import SegmentParser
from shardls.core import Severity

HEADER = """\
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
x = np.zeros((8, 8))
"""


def _reports(analysis: FileAnalysis) -> list[tuple[str, int, Severity]]:
    return [(d.code, d.span.line, d.severity) for d in analysis.diagnostics]


def test_a_rejected_construction_is_reported_at_the_construction_only() -> None:
    source = HEADER + (
        "s = NamedSharding(mesh, P('batch'))\n"
        "y = jax.device_put(x, s)\n"
        "f = jax.jit(lambda a: a, in_shardings=s)\n"
        "def put(a, sharding):\n"
        "    return jax.device_put(a, sharding)\n"
        "z = put(x, s)\n"
    )
    analysis = analyze(source)

    assert _reports(analysis) == [("SH005", line_of(source, "s = Named"), Severity.ERROR)]


def test_a_sharding_passed_to_an_unrecognised_call_is_a_site_that_reports_its_construction() -> None:
    source = HEADER + (
        "from elsewhere import put\n"
        "y = put(x, NamedSharding(mesh, P('data', 'data')))\n"
        "z = put(x, NamedSharding(mesh, P('data', 'model')))\n"
    )
    analysis = analyze(source)

    assert _reports(analysis) == [("SH004", line_of(source, "y = put"), Severity.ERROR)]
    built = [s for s in analysis.sites if s.kind is SiteKind.NAMED_SHARDING]
    assert sorted(s.span.line for s in built) == [line_of(source, "y = put"), line_of(source, "z = put")]


def test_a_sharding_inside_a_recognised_call_stays_that_call_s_site() -> None:
    source = HEADER + "y = jax.device_put(x, NamedSharding(mesh, P('batch')))\n"
    analysis = analyze(source)

    assert [s.kind for s in analysis.sites] == [SiteKind.DEVICE_PUT]
    assert _reports(analysis) == [("SH005", line_of(source, "y = "), Severity.ERROR)]


def test_a_helper_of_another_module_adds_no_second_report(tmp_path: Path) -> None:
    helpers = "import jax\n\ndef put(x, sharding):\n    return jax.device_put(x, sharding)\n"
    main = HEADER + (
        "from pkg.helpers import put\n"
        "s = NamedSharding(mesh, P('batch'))\n"
        "a = put(x, s)\n"
        "b = put(x, NamedSharding(mesh, P('data', 'data')))\n"
        "c = put(np.zeros((6, 8)), NamedSharding(mesh, P('model')))\n"
    )
    analyzer = workspace(tmp_path, {"pkg/__init__.py": "", "pkg/helpers.py": helpers, "pkg/main.py": main})
    analysis = analyzer.analyze(str(tmp_path / "pkg" / "main.py"), main)

    assert _reports(analysis) == [
        ("SH005", line_of(main, "s = Named"), Severity.ERROR),
        ("SH004", line_of(main, "b = put"), Severity.ERROR),
        # A shape meets the sharding only in the helper: at most a warning naming it.
        ("SH001", line_of(main, "c = put"), Severity.WARNING),
    ]


def test_a_sharding_built_in_another_module_is_still_reported_at_its_use(tmp_path: Path) -> None:
    shardings = HEADER + "BATCH = NamedSharding(mesh, P('batch'))\n"
    train = "import jax\nimport numpy as np\nfrom shardings import BATCH\ny = jax.device_put(np.zeros(8), BATCH)\n"
    analyzer = workspace(tmp_path, {"shardings.py": shardings, "train.py": train})

    analysis = analyzer.analyze(str(tmp_path / "train.py"), train)

    assert [(d.code, d.span.line) for d in analysis.diagnostics] == [("SH005", 3)]


def test_a_use_s_report_stays_when_the_construction_has_none() -> None:
    """The rule drops a use's report only when the construction's own report is there (the walk
    may not have reached the construction in a context where its mesh is known)."""
    source = "x = 1\n" * 4
    built_at = Span(1, 4, 1, 40)
    use = Diagnostic(Span(3, 0, 3, 10), "SH005", Severity.ERROR, "'b' is not an axis", raised_at=built_at)
    at_build = Diagnostic(Span(1, 20, 1, 30), "SH005", Severity.ERROR, "'b' is not an axis")
    other_code = Diagnostic(Span(1, 20, 1, 30), "SH004", Severity.ERROR, "'a' is used twice")
    module = ModuleInfo("/virtual/model.py", None, SegmentParser().parse(source))

    def kept(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
        return list(reported(diagnostics, Settings(), Pragmas(), module, True, None)[0])

    assert kept([use, at_build]) == [at_build]
    assert kept([use]) == [use]
    assert kept([use, other_code]) == [other_code, use]
