"""The two formats for people, `full` and `concise`: the same listing, one diagnostic rendered
differently, then a summary line. With --show-layouts each file's layouts are listed beside
its diagnostics, in the order of their lines, so a layout and the problem it has are read
together."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TextIO

from shardls.analysis.facts import Diagnostic
from shardls.cli.check_files import FileReport
from shardls.cli.output.common import OutputOptions, diagnostics, position
from shardls.cli.output.style import Style
from shardls.render.site_text import layout_summary
from shardls.render.visible import visible

RenderDiagnostic = Callable[[FileReport, Diagnostic, Style], str]


def write_text(
    render: RenderDiagnostic, reports: Sequence[FileReport], options: OutputOptions, out: TextIO
) -> None:
    style = Style(options.color)
    for report in reports:
        entries = [((d.span.line, d.span.column, 1), render(report, d, style)) for d in report.diagnostics]
        if options.show_layouts:
            entries += [
                (
                    (site.span.line, site.span.column, 0),
                    f"{style.path(visible(position(report.path, report.locate(site.span))))}: "
                    f"{visible(layout_summary(site))}\n",
                )
                for site in report.sites
            ]
        for _, text in sorted(entries, key=lambda entry: entry[0]):
            out.write(text)
    if options.summary:
        out.write(style.emphasis(summary(reports)) + "\n")


def concise_line(report: FileReport, diagnostic: Diagnostic, style: Style) -> str:
    """`model.py:12:5: SH001 <message>`."""
    where = style.path(visible(position(report.path, report.locate(diagnostic.span))))
    return f"{where}: {style.severity(diagnostic.code, diagnostic.severity)} {visible(diagnostic.message)}"


def summary(reports: Sequence[FileReport]) -> str:
    """`Found 3 problems (2 errors, 1 warning) in 2 of 5 files.`, or that all checks passed; a file
    shardls failed on is never counted as passed, so the line says how many were not checked."""
    files = f"{len(reports)} file{'' if len(reports) == 1 else 's'}"
    failed = sum(1 for report in reports if report.internal_error)
    unchecked = f" {failed} of them could not be checked (see the internal errors above)." if failed else ""
    counts = Counter(d.severity.value for _, d in diagnostics(reports))
    total = sum(counts.values())
    if not total:
        return f"No problems found ({files}).{unchecked}" if failed else f"All checks passed ({files})."
    kinds = ", ".join(f"{n} {kind}{'' if n == 1 else 's'}" for kind, n in sorted(counts.items()))
    with_problems = sum(1 for report in reports if report.diagnostics)
    return f"Found {total} problem{'' if total == 1 else 's'} ({kinds}) in {with_problems} of {files}.{unchecked}"
