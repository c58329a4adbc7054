"""SH213: a model whose parameters (plus optimizer state, when an optimizer is configured) need
more memory per device than `hbm-per-device`.

Reported where the model is created (each instantiation outside another model), or on the class
name when the file never instantiates it; nothing is reported for submodules on their own.
"""

from __future__ import annotations

from shardls.analysis.facts import Diagnostic, Span
from shardls.analysis.settings import Settings
from shardls.analysis.workspace import Workspace
from shardls.core import Severity
from shardls.memory.discover import file_models
from shardls.memory.figures import per_device_bytes, summary
from shardls.memory.model import ModelMemory, Models
from shardls.memory.optimizer import OPTIMIZERS, optimizer_state
from shardls.render.units import short_bytes

CODE = "SH213"


def memory_diagnostics(workspace: Workspace, path: str, text: str, settings: Settings) -> list[Diagnostic]:
    """SH213 for one file, as the analyzer's producer (`Analyzer(producers=...)`): computed only
    when `hbm-per-device` is set and the rule is enabled, since sizing models costs a walk."""
    if settings.hbm_per_device is None or not settings.enabled(CODE):
        return []
    return hbm_diagnostics(
        file_models(workspace, path, text, settings), settings.hbm_per_device, settings.optimizer
    )


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
