"""`--output-format junit`: JUnit XML, for CI systems that show test reports (GitLab, Jenkins,
Azure Pipelines), shaped as ruff's: one `<testsuite>` per file with findings, one failing
`<testcase>` per diagnostic; when there is none, one passing test case says so (a report with
no tests reads as "nothing ran" to some CI systems).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath
from typing import TextIO
from xml.etree import ElementTree

from shardls.cli.check_files import FileReport
from shardls.cli.output.common import OutputOptions

PACKAGE = "org.shardls"


def write(reports: Sequence[FileReport], options: OutputOptions, out: TextIO) -> None:
    with_findings = [report for report in reports if report.diagnostics]
    total = sum(len(report.diagnostics) for report in with_findings)
    root = ElementTree.Element(
        "testsuites", name="shardls", tests=str(max(total, 1)), failures=str(total), errors="0"
    )
    for report in with_findings:
        count = str(len(report.diagnostics))
        suite = ElementTree.SubElement(
            root,
            "testsuite",
            name=report.path,
            tests=count,
            disabled="0",
            errors="0",
            failures=count,
            package=PACKAGE,
        )
        classname = str(PurePath(report.path).with_suffix(""))
        for diagnostic in report.diagnostics:
            where = report.locate(diagnostic.span)
            case = ElementTree.SubElement(
                suite,
                "testcase",
                name=f"{PACKAGE}.{diagnostic.code}",
                classname=classname,
                line=str(where.line),
                column=str(where.column),
            )
            cell = f"cell {where.cell}, " if where.cell is not None else ""
            failure = ElementTree.SubElement(
                case, "failure", message=diagnostic.message, type=diagnostic.severity.value
            )
            failure.text = f"{cell}line {where.line}, col {where.column}, {diagnostic.message}"
    if not with_findings:
        suite = ElementTree.SubElement(
            root,
            "testsuite",
            name="shardls",
            tests="1",
            disabled="0",
            errors="0",
            failures="0",
            package=PACKAGE,
        )
        ElementTree.SubElement(suite, "testcase", name="No errors found", classname="shardls")
    ElementTree.indent(root, space="  ")
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    # ASCII with character references: the declared UTF-8 stays true whatever the encoding of
    # the stream (a cp1252 console redirected to a file) and the XML the same document.
    out.write(
        ElementTree.tostring(root, encoding="unicode").encode("ascii", "xmlcharrefreplace").decode("ascii")
    )
    out.write("\n")
