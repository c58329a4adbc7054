"""`--output-format sarif`: SARIF 2.1.0, for code-scanning services and IDE viewers.

One run; the driver lists every rule of ALL_RULES (id, name, summary, default level and a
helpUri to its page under docs/rules/). Columns count Unicode code points, as Python strings
do (`columnKind`). Paths are relative to the working directory (`%SRCROOT%`) when possible.

Diagnostics a comment suppressed are results too, with an `inSource` suppression whose
justification is the comment: code scanning then shows them as dismissed in code instead of
forgetting them (settings such as `ignore` remove rules, so those are not results at all).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePath
from typing import TextIO
from urllib.parse import quote

from shardls import __version__
from shardls.analysis.facts import Diagnostic
from shardls.analysis.pragmas import comment_line
from shardls.analysis.rules import ALL_RULES, PROJECT_URL, rule_url
from shardls.analysis.source import SegmentParser
from shardls.cli.check_files import FileReport, Location
from shardls.cli.output.common import OutputOptions, diagnostics
from shardls.core import Severity

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
"""The one place to change if the repository moves."""

_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def write(reports: Sequence[FileReport], options: OutputOptions, out: TextIO) -> None:
    codes = list(ALL_RULES)
    run = {
        "tool": {
            "driver": {
                "name": "shardls",
                "version": __version__,
                "informationUri": PROJECT_URL,
                "rules": [
                    {
                        "id": rule.code,
                        "name": rule.name,
                        "shortDescription": {"text": rule.summary},
                        "helpUri": rule_url(rule.code),
                        "defaultConfiguration": {"level": _LEVELS[rule.severity]},
                    }
                    for rule in ALL_RULES.values()
                ],
            }
        },
        "columnKind": "unicodeCodePoints",
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
        "results": [
            *(_result(report, d, codes) for report, d in diagnostics(reports)),
            *(result for report in reports for result in _suppressed(report, codes)),
        ],
    }
    json.dump({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, out, indent=2)
    out.write("\n")


def _result(report: FileReport, diagnostic: Diagnostic, codes: list[str]) -> dict[str, object]:
    result: dict[str, object] = {
        "ruleId": diagnostic.code,
        "level": _LEVELS[diagnostic.severity],
        "message": {"text": diagnostic.message},
        "locations": [_location(report.path, report.locate(diagnostic.span))],
    }
    if diagnostic.code in codes:
        result["ruleIndex"] = codes.index(diagnostic.code)
    if diagnostic.related:
        result["relatedLocations"] = [
            {
                "id": number,
                **_location(*report.related_location(related)),
                "message": {"text": related.message},
            }
            for number, related in enumerate(diagnostic.related)
        ]
    return result


_COMMENT = re.compile(r"#\s*(?:shardls\s*:|noqa\b).*$", re.IGNORECASE)


def _suppressed(report: FileReport, codes: list[str]) -> Iterator[dict[str, object]]:
    """The report's silenced diagnostics as results with an `inSource` suppression whose
    justification is the comment that silenced them (where the analysis puts it: on the line,
    or on the last line of the continuation or multi-line string the line is part of)."""
    if not report.suppressed:
        return
    source = SegmentParser().parse("\n".join(report.lines))
    for diagnostic in report.suppressed:
        suppression: dict[str, object] = {"kind": "inSource", "status": "accepted"}
        line = comment_line(source, diagnostic.span.line)
        found = _COMMENT.search(report.lines[line]) if line < len(report.lines) else None
        if found is not None:
            suppression["justification"] = found.group(0).strip()
        yield {**_result(report, diagnostic, codes), "suppressions": [suppression]}


def _location(path: str, where: Location) -> dict[str, object]:
    region: dict[str, object] = {
        "startLine": where.line,
        "startColumn": where.column,
        "endLine": where.end_line,
        "endColumn": where.end_column,
    }
    location: dict[str, object] = {
        "physicalLocation": {"artifactLocation": _artifact(path), "region": region}
    }
    if where.cell is not None:
        location["properties"] = {"cell": where.cell}
    return location


def _artifact(path: str) -> dict[str, str]:
    if PurePath(path).is_absolute():
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(PurePath(path).as_posix()), "uriBaseId": "%SRCROOT%"}
