"""SH213: a model whose parameters (plus optimizer state, when an optimizer is configured) need
more memory per device than `hbm-per-device`.

Reported where the model is created (each instantiation outside another model), or on the class
name when the file never instantiates it; nothing is reported for submodules on their own. The
sizing (`memory.discover`, `memory.hbm`) is imported only when the setting asks for it: every
`check` analyses with this producer, and most never set `hbm-per-device`.
"""

from __future__ import annotations

from shardls.analysis.facts import Diagnostic
from shardls.analysis.settings import Settings
from shardls.analysis.workspace import Workspace

CODE = "SH213"


def memory_diagnostics(workspace: Workspace, path: str, text: str, settings: Settings) -> list[Diagnostic]:
    """SH213 for one file, as the analyzer's producer (`Analyzer(producers=...)`): computed only
    when `hbm-per-device` is set and the rule is enabled, since sizing models costs a walk."""
    if settings.hbm_per_device is None or not settings.enabled(CODE):
        return []
    from shardls.memory.discover import file_models
    from shardls.memory.hbm import hbm_diagnostics

    return hbm_diagnostics(
        file_models(workspace, path, text, settings), settings.hbm_per_device, settings.optimizer
    )
