"""Editor settings (initializationOptions, workspace/configuration, didChangeConfiguration) stacked
over the configuration file that applies to each document.

Editors send JSON with camelCase keys, either flat or under a `shardls` section:
`deviceCount`, `defaultMesh` (`"data=2,model=4"` or `{"data": 2}`), `select`, `ignore`
(lists or comma text of rule codes), `dtype`, `hbmPerDevice` (`"16GiB"` or bytes) and `optimizer`
(model memory: code lenses and SH213), `inlayHints` (true/false; it changes what the server
shows, not the analysis) and `typeInlayHints` (true/false, default false: inlay hints also after
every intermediate array of known sharded type, `y = x @ w`). Precedence follows `shardls.config`: a pragma in the file >
editor settings > `[tool.shardls]` / shardls.toml > defaults.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from shardls.analysis.settings import Settings
from shardls.config import (
    DEFAULT_CONFIG,
    Config,
    ConfigError,
    SettingsLayer,
    bytes_setting,
    codes_setting,
    config_for,
    device_count_setting,
    dtype_setting,
    flag_setting,
    merge_settings,
    mesh_setting,
    optimizer_setting,
)

SECTION = "shardls"
EDITOR = "editor settings"

T = TypeVar("T")


@dataclass(frozen=True)
class EditorSettings:
    layer: SettingsLayer = SettingsLayer(EDITOR)
    inlay_hints: bool = True
    type_inlay_hints: bool = False
    """Hints after intermediate arrays too: off by default, since model code computes many."""


def read_editor_settings(raw: object) -> tuple[EditorSettings, list[str]]:
    """The editor's JSON as settings, and one message per value that was skipped as unusable."""
    found = raw.get(SECTION, raw) if isinstance(raw, dict) else None
    table: dict[str, object] = found if isinstance(found, dict) else {}
    problems: list[str] = []

    def read(key: str, convert: Callable[[object], T]) -> T | None:
        value = table.get(key)
        if value is None:
            return None
        try:
            return convert(value)
        except ValueError as error:
            problems.append(f"{EDITOR}: {key}: {error}")
            return None

    layer = SettingsLayer(
        EDITOR,
        device_count=read("deviceCount", device_count_setting),
        default_mesh=read("defaultMesh", mesh_setting),
        select=read("select", codes_setting),
        ignore=read("ignore", codes_setting),
        dtype=read("dtype", dtype_setting),
        hbm_per_device=read("hbmPerDevice", bytes_setting),
        optimizer=read("optimizer", optimizer_setting),
    )
    return (
        EditorSettings(
            layer,
            read("inlayHints", flag_setting) is not False,
            read("typeInlayHints", flag_setting) is True,
        ),
        problems,
    )


class SettingsStore:
    """The editor's settings, and each folder's configuration file (read once, until files change).

    A broken configuration file must not stop the editor: it is reported once through `report`
    and the defaults are used in its place.
    """

    def __init__(self, report: Callable[[str], None]) -> None:
        self.editor = EditorSettings()
        self._report = report
        self._configs: dict[Path, Config] = {}
        self._reported: set[str] = set()

    def update(self, raw: object) -> bool:
        """Take new editor settings; returns whether anything changed."""
        editor, problems = read_editor_settings(raw)
        for problem in problems:
            self._report(problem)
        changed = editor != self.editor
        self.editor = editor
        return changed

    def files_changed(self) -> None:
        """Configuration files may have changed on disk: read them again when next needed."""
        self._configs.clear()
        self._reported.clear()

    def for_path(self, path: str) -> Settings:
        return merge_settings(self.config_for(path).layer, self.editor.layer, file=Path(path))

    def config_for(self, path: str) -> Config:
        """The configuration file that applies to a file (the defaults when none does)."""
        return self._config(Path(path).parent)

    def _config(self, folder: Path) -> Config:
        config = self._configs.get(folder)
        if config is None:
            try:
                config = config_for(folder)
            except ConfigError as error:
                if str(error) not in self._reported:
                    self._reported.add(str(error))
                    self._report(f"{error}; using the defaults")
                config = DEFAULT_CONFIG
            self._configs[folder] = config
        return config
