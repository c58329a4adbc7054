"""The formats `shardls check --output-format` writes, by name (see each module for its shape).

Each format's module is imported when it is used: a check writes one format, and the others
(SARIF, JUnit's XML) would otherwise cost every run their imports."""

from __future__ import annotations

import importlib

from shardls.cli.output.common import OutputOptions, Writer

FORMATS: dict[str, str] = {
    "full": "full",
    "concise": "concise",
    "json": "json_format",
    "github": "github",
    "sarif": "sarif",
    "gitlab": "gitlab",
    "junit": "junit",
}
"""Each format's module of this package (which defines its `write`)."""

LAYOUT_FORMATS = frozenset({"full", "concise", "json"})
"""The formats that can show layouts (--show-layouts); the others are about problems only."""


def writer(name: str) -> Writer:
    """The `write` function of the format `name` (one of FORMATS)."""
    module = importlib.import_module(f"{__name__}.{FORMATS[name]}")
    found: Writer = module.write
    return found


__all__ = ["FORMATS", "LAYOUT_FORMATS", "OutputOptions", "Writer", "writer"]
