"""`shardls check --show-settings`: the settings one file is checked with, and where each came from.

Like `ruff check --show-settings`: nothing is checked; for the first file the paths name (or
the `--stdin-filename`), it prints the configuration file that applies, the workspace root,
every setting after merging the layers (with the layer that set it), the rules that are
reported and the codes `per-file-ignores` drop for this file. The text is TOML-like so that a
value can be copied into `[tool.shardls]`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from shardls.analysis.rules import ALL_RULES
from shardls.analysis.settings import DEFAULT_DEVICE_COUNT, Settings
from shardls.config import Config, SettingsLayer, top_setting
from shardls.files import display_path
from shardls.render.layout_text import mesh_text


def write_settings(
    display: str,
    config: Config,
    layers: Sequence[SettingsLayer],
    settings: Settings,
    root: Path,
    out: TextIO,
) -> None:
    def origin(name: str) -> str:
        return top_setting(layers, name)[1]

    mesh = settings.default_mesh
    selection = replace(settings, ignore=frozenset())
    # the rules selected for every file, before this file's per-file-ignores
    rows = [
        ("device-count", str(settings.device_count or DEFAULT_DEVICE_COUNT), origin("device_count")),
        ("default-mesh", "none" if mesh is None else json.dumps(mesh_text(mesh)), origin("default_mesh")),
        ("dtype", json.dumps(settings.dtype.name if settings.dtype else "float32"), origin("dtype")),
        ("x64", str(settings.x64).lower(), origin("x64")),
        ("bare-noqa", str(settings.bare_noqa).lower(), origin("bare_noqa")),
        (
            "hbm-per-device",
            "none" if settings.hbm_per_device is None else f"{settings.hbm_per_device:_}",
            origin("hbm_per_device"),
        ),
        ("optimizer", json.dumps(settings.optimizer) if settings.optimizer else "none", origin("optimizer")),
        (
            "exclude",
            json.dumps(list(config.exclude)),
            display_path(config.path) if config.path else "defaults",
        ),
    ]
    width = max(len(f"{key} = {value}") for key, value, _ in rows)
    lines = [
        f"Resolved settings for: {json.dumps(display)}",
        f"Settings path: {json.dumps(display_path(config.path)) if config.path else 'none (defaults)'}",
        f"Workspace root: {json.dumps(display_path(root))}",
        "",
        *(f"{f'{key} = {value}':<{width}}  # {where}" for key, value, where in rows),
        *_codes("rules.enabled", [code for code in ALL_RULES if selection.enabled(code)]),
        *_codes("rules.ignored-in-this-file", sorted(settings.ignore)),
    ]
    out.write("\n".join(lines) + "\n")


def _codes(key: str, codes: Sequence[str]) -> list[str]:
    if not codes:
        return [f"{key} = []"]
    return [
        f"{key} = [",
        *(
            f'    "{code}",  # {ALL_RULES[code].name}' if code in ALL_RULES else f'    "{code}",'
            for code in codes
        ),
        "]",
    ]
