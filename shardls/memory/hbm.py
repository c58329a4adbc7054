"""SH213's computation: the models of a file sized per device, against `hbm-per-device`
(imported by `memory.diagnostics` only when that setting is given)."""

from __future__ import annotations

from shardls.analysis.facts import Diagnostic, Span
from shardls.core import Severity
from shardls.memory.diagnostics import CODE
from shardls.memory.figures import per_device_bytes, summary
from shardls.memory.model import ModelMemory, Models
from shardls.memory.optimizer import OPTIMIZERS, optimizer_state
from shardls.render.units import short_bytes


def hbm_diagnostics(models: Models, hbm: int, optimizer: str | None = None) -> list[Diagnostic]:
    chosen = OPTIMIZERS.get(optimizer) if optimizer is not None else None
    instantiated = {m.class_name for m in models.models if m.instantiation}
    found = []
    for model in models.models:
        if not model.instantiation and model.class_name in instantiated:
            continue
        state = optimizer_state(model, chosen) if chosen is not None else None
        used = per_device_bytes(model, state)
        if used <= hbm:
            continue
        what = f"parameters + {chosen.name} state" if chosen is not None else "parameters"
        found.append(
            Diagnostic(
                _span(model),
                CODE,
                Severity.WARNING,
                f"{model.name} needs {short_bytes(used)} per device for its {what}, more than "
                f"hbm-per-device ({short_bytes(hbm)}): {summary(model, state)}; shard it over more "
                "devices (e.g. FSDP over a mesh axis) or use a smaller dtype",
                data={"bytes_per_device": used, "hbm_per_device": hbm},
            )
        )
    return found


def _span(model: ModelMemory) -> Span:
    return Span(model.line, model.column, model.line, max(model.end_column, model.column))
