"""The formats `shardls check --output-format` writes, by name (see each module for its shape)."""

from __future__ import annotations

from shardls.cli.output import concise, full, github, gitlab, json_format, junit, sarif
from shardls.cli.output.common import OutputOptions, Writer

FORMATS: dict[str, Writer] = {
    "full": full.write,
    "concise": concise.write,
    "json": json_format.write,
    "github": github.write,
    "sarif": sarif.write,
    "gitlab": gitlab.write,
    "junit": junit.write,
}

LAYOUT_FORMATS = frozenset({"full", "concise", "json"})
"""The formats that can show layouts (--show-layouts); the others are about problems only."""

__all__ = ["FORMATS", "LAYOUT_FORMATS", "OutputOptions", "Writer"]
