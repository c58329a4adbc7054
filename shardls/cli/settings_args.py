"""The flags `check` and `explain` share for analysis settings, and how they meet the config file.

Flags form one settings layer over the configuration file's (`shardls.config`), so a flag
overrides the file and a pragma in the analysed file overrides both.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from shardls.cli.command import ArgumentParser, UsageError, option_type
from shardls.cli.parse import parse_device_count
from shardls.config import (
    DEFAULT_CONFIG,
    Config,
    ConfigError,
    FileIgnore,
    SettingsLayer,
    config_for,
    load_config,
    parse_codes,
    parse_file_ignores,
)
from shardls.meshtext import parse_mesh_text

COMMAND_LINE = "the command line"


def add_mesh_arguments(parser: ArgumentParser) -> None:
    """`--device-count` and `--mesh`: what every command that analyses code may need to assume."""
    parser.add_argument(
        "--device-count",
        type=option_type(parse_device_count),
        metavar="N",
        help="devices to assume when a file does not say (default: config file, else 8)",
    )
    parser.add_argument(
        "--mesh",
        type=option_type(parse_mesh_text),
        metavar="NAME=SIZE,...",
        help="mesh to assume where the code has none, e.g. data=2,model=4 or data=2:explicit",
    )


def add_settings_arguments(parser: ArgumentParser) -> None:
    add_mesh_arguments(parser)
    for flag, what in _CODE_OPTIONS:
        parser.add_argument(flag, type=option_type(parse_codes), metavar="CODES", help=what)
    parser.add_argument(
        "--per-file-ignores",
        action="append",
        type=option_type(_cwd_file_ignores),
        metavar="GLOB:CODES",
        help="ignore codes in the files a glob matches, e.g. 'tests/*:SH001,SH002' (repeatable; "
        "replaces the config's per-file-ignores)",
    )
    parser.add_argument(
        "--extend-per-file-ignores",
        action="append",
        type=option_type(_cwd_file_ignores),
        metavar="GLOB:CODES",
        help="like --per-file-ignores, but adds to the config's",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="use this pyproject.toml or shardls.toml instead of searching from each path upward",
    )
    parser.add_argument(
        "--isolated", action="store_true", help="ignore every configuration file (defaults and flags only)"
    )


_CODE_OPTIONS = (
    ("--select", "report only these rule codes or prefixes, e.g. SH001,SH1 (replaces the config's select)"),
    ("--ignore", "never report these rule codes or prefixes (replaces the config's ignore)"),
    ("--extend-select", "also report these rule codes or prefixes (adds to the config's selection)"),
    ("--extend-ignore", "also ignore these rule codes or prefixes (adds to the config's ignore)"),
)
"""The flags that take a list of rule codes, with their help."""


def _cwd_file_ignores(text: str) -> tuple[FileIgnore, ...]:
    """Patterns on the command line are relative to the working directory."""
    return parse_file_ignores(text, Path.cwd())


def _joined(groups: list[tuple[FileIgnore, ...]] | None) -> tuple[FileIgnore, ...] | None:
    return None if groups is None else tuple(entry for group in groups for entry in group)


def config_and_layer(args: argparse.Namespace, path: Path) -> tuple[Config, SettingsLayer]:
    """The configuration for `path` (or --config, or none with --isolated) and the layer of
    flags to put over it."""
    if args.isolated and args.config is not None:
        raise UsageError("--isolated ignores every configuration file, so it cannot be used with --config")
    try:
        if args.isolated:
            config = DEFAULT_CONFIG
        else:
            config = load_config(args.config) if args.config is not None else config_for(path)
    except ConfigError as error:
        raise UsageError(str(error)) from None
    layer = SettingsLayer(
        COMMAND_LINE,
        device_count=args.device_count,
        default_mesh=args.mesh,
        select=args.select,
        ignore=args.ignore,
        extend_select=args.extend_select,
        extend_ignore=args.extend_ignore,
        per_file_ignores=_joined(args.per_file_ignores),
        extend_per_file_ignores=_joined(args.extend_per_file_ignores),
    )
    return config, layer
