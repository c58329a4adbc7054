"""`--statistics`: how many diagnostics of each code, most frequent first, instead of the list.

Text: `12  SH001  indivisible-dimension  error`; with `--output-format json`, a list of
`{"code", "name", "severity", "count"}` objects.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import TextIO

from shardls.analysis.rules import ALL_RULES
from shardls.cli.check_files import FileReport
from shardls.cli.output.common import diagnostics

FORMATS = frozenset({"full", "concise", "json"})


def write_statistics(reports: Sequence[FileReport], output_format: str, out: TextIO) -> None:
    severities = {d.code: d.severity.value for _, d in diagnostics(reports)}
    counts = Counter(d.code for _, d in diagnostics(reports))
    rows = [
        {
            "code": code,
            "name": ALL_RULES[code].name if code in ALL_RULES else None,
            "severity": severities[code],
            "count": count,
        }
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    if output_format == "json":
        json.dump(rows, out, indent=2)
        out.write("\n")
        return
    count_width = len(str(max(counts.values(), default=0)))
    name_width = max((len(str(row["name"] or "")) for row in rows), default=0)
    for row in rows:
        out.write(
            f"{row['count']:>{count_width}}  {row['code']}  {row['name'] or '':<{name_width}}  {row['severity']}\n"
        )
