"""A memory report in each output format: text, Markdown, JSON (a stable interface) and CSV.

Every format shows the same rows: one per parameter (or per group of identical copies, e.g.
`layers[0..79].mlp.up.kernel`), then per-submodule subtotals, the model total, the optimizer
state and the headroom against `--hbm` when given.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass

from shardls.memory.figures import count_text, per_device_bytes, shape_text, summary
from shardls.memory.model import ModelMemory, ParamMemory
from shardls.memory.optimizer import Optimizer, OptimizerState, optimizer_state
from shardls.render.units import short_bytes
from shardls.render.visible import visible

FORMATS = ("text", "markdown", "json", "csv")
HEADER = ("param", "global shape", "dtype", "spec", "per-device shape", "bytes / device")
JSON_VERSION = 1


@dataclass(frozen=True)
class ReportOptions:
    optimizer: Optimizer | None = None
    hbm: int | None = None


def render(models: Sequence[ModelMemory], options: ReportOptions, output_format: str) -> str:
    if output_format == "json":
        import json

        return json.dumps(report_json(models, options), indent=2) + "\n"
    if output_format == "csv":
        return report_csv(models)
    markdown = output_format == "markdown"
    return visible("\n".join(model_text(model, options, markdown) for model in models))


# -- rows ----------------------------------------------------------------------------------------


def _spec_cell(param: ParamMemory, model: ModelMemory) -> str:
    if param.spec is not None:
        return param.spec.display()
    return "replicated" if model.mesh_text else "-"


def _row(param: ParamMemory, model: ModelMemory) -> tuple[str, ...]:
    per_device = param.bytes_per_device
    copies = f" × {param.count}" if param.count > 1 else ""
    return (
        param.path,
        shape_text(param.shape),
        param.dtype.name,
        _spec_cell(param, model),
        shape_text(param.shard_shape),
        "?" if per_device is None else short_bytes(per_device * param.count) + copies,
    )


def _state(model: ModelMemory, options: ReportOptions) -> OptimizerState | None:
    return optimizer_state(model, options.optimizer) if options.optimizer is not None else None


# -- text and Markdown ---------------------------------------------------------------------------


def model_text(model: ModelMemory, options: ReportOptions, markdown: bool = False) -> str:
    """One model: title, parameter table, subtotals, totals, notes."""
    where = f"{model.path}:{model.line + 1}" if model.line or model.instantiation else model.path
    title = f"{model.name} ({model.class_name})" if model.name != model.class_name else model.name
    lines = [f"## {title}" if markdown else title, f"{where}", ""]
    rows = [_row(p, model) for p in model.params]
    lines += _table(HEADER, rows, markdown)
    subtotals = model.subtotals()
    if len(subtotals) > 1:
        lines += ["", "**Per submodule**" if markdown else "per submodule:"]
        sub_rows = [
            (s.name, count_text(s.param_count), short_bytes(s.total_bytes), short_bytes(s.bytes_per_device))
            for s in subtotals
        ]
        lines += _table(("submodule", "params", "total", "per device"), sub_rows, markdown)
    lines += ["", *_totals(model, options, markdown)]
    notes = [*model.assumptions]
    if notes:
        lines += ["", "**Assumptions**" if markdown else "assumptions:"]
        lines += [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def _totals(model: ModelMemory, options: ReportOptions, markdown: bool) -> list[str]:
    state = _state(model, options)
    bullet = "- " if markdown else ""
    lines = [
        f"{bullet}total: {summary(model)}",
        f"{bullet}parameters: {model.param_count:,}; bytes: {model.total_bytes:,}; "
        f"fullest device: {model.max_bytes_per_device:,} bytes",
    ]
    if state is not None:
        lines.append(
            f"{bullet}optimizer state ({state.optimizer.description}): {short_bytes(state.total_bytes)} in total, "
            f"{short_bytes(state.bytes_per_device)} / device"
        )
    if options.hbm is not None:
        used = per_device_bytes(model, state)
        left = options.hbm - used
        verdict = "fits" if left >= 0 else "DOES NOT FIT"
        lines.append(
            f"{bullet}HBM {short_bytes(options.hbm)} / device: {short_bytes(used)} used, "
            f"{'headroom ' + short_bytes(left) if left >= 0 else 'over by ' + short_bytes(-left)} ({verdict})"
        )
    return lines


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> list[str]:
    if markdown:
        escape = [[cell.replace("|", "\\|") for cell in row] for row in rows]
        return [
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---" for _ in header) + "|",
            *(
                "| " + " | ".join(f"`{c}`" if i in (1, 3, 4) else c for i, c in enumerate(row)) + " |"
                for row in escape
            ),
        ]
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in [header, *rows]
    ]


# -- JSON and CSV --------------------------------------------------------------------------------


def report_json(models: Sequence[ModelMemory], options: ReportOptions) -> dict[str, object]:
    """`models`: name, path, line (1-based), totals, params and assumptions. A params entry stands
    for `count` identical copies; its `bytes_per_device` and `total_bytes` cover all of them."""
    out: list[dict[str, object]] = []
    for model in models:
        entry: dict[str, object] = {
            "name": model.name,
            "class": model.class_name,
            "path": model.path,
            "line": model.line + 1,
            "mesh": model.mesh_text,
            "param_count": model.param_count,
            "total_bytes": model.total_bytes,
            "max_bytes_per_device": model.max_bytes_per_device,
            "params": [_param_json(p) for p in model.params],
            "assumptions": list(model.assumptions),
        }
        state = _state(model, options)
        if state is not None:
            entry["optimizer"] = {
                "name": state.optimizer.name,
                "description": state.optimizer.description,
                "total_bytes": state.total_bytes,
                "bytes_per_device": state.bytes_per_device,
            }
        if options.hbm is not None:
            entry["hbm_per_device"] = options.hbm
            entry["headroom_bytes"] = options.hbm - per_device_bytes(model, state)
        out.append(entry)
    return {"version": JSON_VERSION, "models": out}


def _param_json(param: ParamMemory) -> dict[str, object]:
    per_device, total = param.bytes_per_device, param.global_bytes
    return {
        "name": param.path,
        "count": param.count,
        "global_shape": list(param.shape),
        "dtype": param.dtype.name,
        "spec": param.spec.to_json() if param.spec is not None else None,
        "shard_shape": list(param.shard_shape),
        "bytes_per_device": None if per_device is None else per_device * param.count,
        "total_bytes": None if total is None else total * param.count,
    }


def report_csv(models: Sequence[ModelMemory]) -> str:
    """One row per parameter entry of every model (totals are sums of the byte columns)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(
        (
            "model",
            "param",
            "count",
            "global_shape",
            "dtype",
            "spec",
            "shard_shape",
            "bytes_per_device",
            "total_bytes",
        )
    )
    for model in models:
        for param in model.params:
            data = _param_json(param)
            writer.writerow(
                (
                    model.name,
                    param.path,
                    param.count,
                    "x".join(str(d) for d in param.shape),
                    param.dtype.name,
                    param.spec.display() if param.spec is not None else "",
                    "x".join(str(d) for d in param.shard_shape),
                    data["bytes_per_device"],
                    data["total_bytes"],
                )
            )
    return buffer.getvalue()
