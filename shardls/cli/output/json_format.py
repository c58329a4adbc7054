"""`--output-format json`: one object for scripts, with stable keys.

    {"diagnostics": [{"path", "cell", "line", "column", "end_line", "end_column",
                      "code", "severity", "message"}, ...],
     "layouts": [{"path", "cell", "line", "column", "kind", "name", "global_shape",
                  "global_formula", "dtype", "spec", "mesh", "shard_shape", "shard_formula",
                  "min_rank", "requires", "bytes_per_device", "assumptions", "jax_type",
                  "sharding_from", "uses"}, ...]}

Positions are 1-based, columns in characters; `cell` is the notebook cell (null for .py
files). `layouts` is present only with --show-layouts. Every key is always present; a value
that is not known statically is null:

- `global_shape` / `shard_shape`: one entry per dimension, an integer or null when its size is
  not known; `global_formula` / `shard_formula` give the same dimensions as text, the size by
  name when unknown (`"batch"`, per device `"batch/4"`), and, when the mesh or an axis size is
  not known here, the axis by name between bars: `"batch/|data|"`, `"128/(|data|*|fsdp|)"`.
  The rank is the array's, never the spec's length.
- `shard_shape` and `shard_formula` are null when the rank is not known or JAX rejects the
  layout on sizes the code states; `min_rank` is then the least rank the spec allows (its
  length), else null. A layout JAX rejects only on mesh sizes shardls assumed (the default
  device count) or a mesh it chose keeps its formulas (`"4/|x|"`) and `requires`.
- `requires`: the divisibility each split dimension needs and that cannot be checked here,
  `{"dim": 0, "size": null, "formula": "batch", "axes": ["data"], "factor": null}` (`factor`
  is the product of the axes' sizes when known). No problem is reported from these.
- `bytes_per_device` is null when a size is not known or JAX rejects the layout.
- `jax_type`: for an array computed from arrays of known sharded type on a mesh with Explicit
  axes (kind `array_type`, at the expression that computes it), what `jax.typeof` says, in
  JAX's notation (`"float32[16@Y,8@X]"`); null for other kinds. `sharding_from` says which line
  gave each mesh axis its place in the type (`"X: device_put at line 7"`).
- `uses`: for a `named_sharding` site (`s = NamedSharding(mesh, P("data"))`), the placements in
  the same file that use the sharding it builds, each `{"cell", "line", "column", "kind",
  "name", "global_shape", "global_formula", "dtype", "shard_shape", "shard_formula"}` (null
  where not known); `[]` for other kinds. The site's own shapes and `bytes_per_device` are
  the uses' when every use whose shape is known agrees on the shape, the per-device shape and
  the dtype; otherwise they stay null (a use whose shape is not known adds nothing).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from shardls.analysis.facts import Diagnostic, Dim, Site
from shardls.cli.check_files import FileReport, Location
from shardls.cli.output.common import OutputOptions, diagnostics
from shardls.render.site_text import dim_text, shard_formula


def write(reports: Sequence[FileReport], options: OutputOptions, out: TextIO) -> None:
    document: dict[str, object] = {
        "diagnostics": [_diagnostic_json(report, d) for report, d in diagnostics(reports)]
    }
    if options.show_layouts:
        document["layouts"] = [
            {
                **_where(report.path, report.locate(site.span)),
                **layout_json(site),
                "uses": [_use_json(report, use) for use in site.uses],
            }
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
    shard = site.shard_dims
    return {
        "kind": site.kind.value,
        "name": site.name,
        "global_shape": None if site.shape is None else [_size(dim) for dim in site.shape],
        "global_formula": None if site.shape is None else [dim_text(dim) for dim in site.shape],
        "dtype": None if site.dtype is None else site.dtype.name,
        "spec": None if site.spec is None else site.spec.to_json(),
        "mesh": None
        if site.mesh is None
        else dict(zip(site.mesh.mesh.axis_names, site.mesh.mesh.axis_sizes)),
        "shard_shape": None if shard is None else [dim.per_device for dim in shard],
        "shard_formula": shard_formula(site),
        "min_rank": site.min_rank,
        "requires": [
            {
                "dim": index,
                "size": _size(dim.size),
                "formula": dim_text(dim.size),
                "axes": list(dim.axes),
                "factor": dim.factor,
            }
            for index, dim in enumerate(shard or ())
            if dim.undecided
        ],
        "bytes_per_device": site.bytes_per_device,
        "assumptions": list(site.assumptions),
        "jax_type": site.jax_type,
        "sharding_from": list(site.type_sources),
    }


def _use_json(report: FileReport, use: Site) -> dict[str, object]:
    """One placement that uses a NamedSharding built elsewhere in the file."""
    location = report.locate(use.span)
    shard = use.shard_dims
    return {
        "cell": location.cell,
        "line": location.line,
        "column": location.column,
        "kind": use.kind.value,
        "name": use.name,
        "global_shape": None if use.shape is None else [_size(dim) for dim in use.shape],
        "global_formula": None if use.shape is None else [dim_text(dim) for dim in use.shape],
        "dtype": None if use.dtype is None else use.dtype.name,
        "shard_shape": None if shard is None else [dim.per_device for dim in shard],
        "shard_formula": shard_formula(use),
    }


def _where(path: str, location: Location) -> dict[str, object]:
    return {"path": path, "cell": location.cell, "line": location.line, "column": location.column}


def _size(dim: Dim) -> int | None:
    return dim if isinstance(dim, int) else None
