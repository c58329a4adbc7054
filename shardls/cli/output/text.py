"""The two formats for people, `full` and `concise`: the same listing, one diagnostic rendered
differently, then a summary line (and the layouts first, with --show-layouts)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TextIO

from shardls.analysis.facts import Diagnostic
from shardls.cli.check_files import FileReport
from shardls.cli.output.common import OutputOptions, diagnostics, position
from shardls.render.site_text import layout_summary

RenderDiagnostic = Callable[[FileReport, Diagnostic], str]


def write_text(
    render: RenderDiagnostic, reports: Sequence[FileReport], options: OutputOptions, out: TextIO
) -> None:
    if options.show_layouts:
        for report in reports:
            for site in report.sites:
                out.write(f"{position(report.path, report.locate(site.span))}: {layout_summary(site)}\n")
    for report, diagnostic in diagnostics(reports):
        out.write(render(report, diagnostic))
    out.write(summary(reports) + "\n")


def concise_line(report: FileReport, diagnostic: Diagnostic) -> str:
    """`model.py:12:5: SH001 <message>`."""
    return f"{position(report.path, report.locate(diagnostic.span))}: {diagnostic.code} {diagnostic.message}"


def summary(reports: Sequence[FileReport]) -> str:
    """`Found 3 problems (2 errors, 1 warning) in 2 of 5 files.`, or that all checks passed."""
    files = f"{len(reports)} file{'' if len(reports) == 1 else 's'}"
    counts = Counter(d.severity.value for _, d in diagnostics(reports))
    total = sum(counts.values())
    if not total:
        return f"All checks passed ({files})."
    kinds = ", ".join(f"{n} {kind}{'' if n == 1 else 's'}" for kind, n in sorted(counts.items()))
    with_problems = sum(1 for report in reports if report.diagnostics)
    return f"Found {total} problem{'' if total == 1 else 's'} ({kinds}) in {with_problems} of {files}."
