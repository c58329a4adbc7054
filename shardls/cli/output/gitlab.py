"""`--output-format gitlab`: a GitLab Code Quality report, shown in merge requests.

    [{"description": "SH001: dimension 0 of ...", "check_name": "SH001", "fingerprint": "...",
      "severity": "major", "location": {"path": "model.py",
      "positions": {"begin": {"line": 7, "column": 62}, "end": {"line": 7, "column": 68}}}}]

Paths are relative to `CI_PROJECT_DIR` when GitLab sets it (as ruff does), so a check run from
a subfolder still points at the right file. The fingerprint hashes the path, the code, the
message and how many identical ones came before, not the line: a finding keeps its identity
when code above it moves, so GitLab does not report it as fixed and new again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from shardls.cli.check_files import FileReport
from shardls.cli.output.common import OutputOptions, diagnostics
from shardls.core import Severity

_SEVERITIES = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def write(reports: Sequence[FileReport], options: OutputOptions, out: TextIO) -> None:
    seen: Counter[tuple[str, str, str]] = Counter()
    issues = []
    for report, diagnostic in diagnostics(reports):
        where = report.locate(diagnostic.span)
        path = _project_path(report.path)
        identity = (path, diagnostic.code, diagnostic.message)
        fingerprint = hashlib.sha256(json.dumps([*identity, seen[identity]]).encode()).hexdigest()
        seen[identity] += 1
        cell = f"cell {where.cell}: " if where.cell is not None else ""
        issues.append(
            {
                "description": f"{diagnostic.code}: {cell}{diagnostic.message}",
                "check_name": diagnostic.code,
                "fingerprint": fingerprint,
                "severity": _SEVERITIES[diagnostic.severity],
                "location": {
                    "path": path,
                    "positions": {
                        "begin": {"line": where.line, "column": where.column},
                        "end": {"line": where.end_line, "column": where.end_column},
                    },
                },
            }
        )
    json.dump(issues, out, indent=2)
    out.write("\n")


def _project_path(path: str) -> str:
    """`path` relative to GitLab's checkout (CI_PROJECT_DIR), with `/`, when it is inside it."""
    project = os.environ.get("CI_PROJECT_DIR")
    absolute = Path(os.path.abspath(path))
    if project:
        try:
            return absolute.relative_to(os.path.abspath(project)).as_posix()
        except ValueError:
            pass
    return Path(path).as_posix()
