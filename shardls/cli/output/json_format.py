"""`--output-format json`: one object for scripts, with stable keys.

    {"diagnostics": [{"path", "cell", "line", "column", "end_line", "end_column",
                      "code", "severity", "message"}, ...],
     "layouts": [{"path", "cell", "line", "column", "kind", "name", "global_shape", "dtype",
                  "spec", "mesh", "shard_shape", "bytes_per_device", "assumptions"}, ...]}

Positions are 1-based, columns in characters; `cell` is the notebook cell (null for .py
files). `layouts` is present only with --show-layouts. Every key is always present; a value
that is not known statically is null, and a dimension of unknown size is its name (`"n"`,
per device `"n/4"`). `shard_shape` and `bytes_per_device` are null when JAX rejects the layout.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from shardls.analysis.facts import Diagnostic, Dim, Site
from shardls.cli.check_files import FileReport, Location
from shardls.cli.output.common import OutputOptions, diagnostics
from shardls.render.site_text import dim_text


def write(reports: Sequence[FileReport], options: OutputOptions, out: TextIO) -> None:
    document: dict[str, object] = {
        "diagnostics": [_diagnostic_json(report, d) for report, d in diagnostics(reports)]
    }
    if options.show_layouts:
        document["layouts"] = [
            {**_where(report.path, report.locate(site.span)), **layout_json(site)}
            for report in reports
            for site in report.sites
        ]
    json.dump(document, out, indent=2)
    out.write("\n")


def _diagnostic_json(report: FileReport, diagnostic: Diagnostic) -> dict[str, object]:
    location = report.locate(diagnostic.span)
    return {
        **_where(report.path, location),
        "end_line": location.end_line,
        "end_column": location.end_column,
        "code": diagnostic.code,
        "severity": diagnostic.severity.value,
        "message": diagnostic.message,
    }


def layout_json(site: Site) -> dict[str, object]:
    shard = site.shard_shape
    return {
        "kind": site.kind.value,
        "name": site.name,
        "global_shape": None if site.shape is None else [_dim(dim) for dim in site.shape],
        "dtype": None if site.dtype is None else site.dtype.name,
        "spec": None if site.spec is None else site.spec.to_json(),
        "mesh": None
        if site.mesh is None
        else dict(zip(site.mesh.mesh.axis_names, site.mesh.mesh.axis_sizes)),
        "shard_shape": None if shard is None else [_dim(dim) for dim in shard],
        "bytes_per_device": site.bytes_per_device,
        "assumptions": list(site.assumptions),
    }


def _where(path: str, location: Location) -> dict[str, object]:
    return {"path": path, "cell": location.cell, "line": location.line, "column": location.column}


def _dim(dim: Dim) -> int | str:
    return dim if isinstance(dim, int) else dim_text(dim)
