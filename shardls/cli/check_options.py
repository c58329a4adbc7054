"""The flags of `shardls check` that decide how a run behaves rather than what it analyses:
what it prints, how it exits, where the code comes from, and whether it keeps watching.
They are ruff's flags with ruff's meanings, so that muscle memory and CI scripts carry over."""

from __future__ import annotations

from pathlib import Path

from shardls.cli.command import ArgumentParser
from shardls.cli.terminal import COLOR_CHOICES


def add_run_arguments(parser: ArgumentParser) -> None:
    parser.add_argument(
        "-e",
        "--exit-zero",
        action="store_true",
        help="exit with status 0 even when there are errors (status 2 still means shardls failed)",
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print the diagnostics and nothing else (no summary)"
    )
    parser.add_argument(
        "-s",
        "--silent",
        action="store_true",
        help="print nothing but errors that stop the check; the exit status still tells",
    )
    parser.add_argument(
        "-w",
        "--watch",
        action="store_true",
        help="check again whenever a checked file or configuration changes",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the cache of results (with --watch every check starts afresh)",
    )
    parser.add_argument(
        "--cache-dir",
        type=Path,
        metavar="DIR",
        help="keep the cache of results here (default: SHARDLS_CACHE_DIR, else the configuration's "
        "cache-dir, else .shardls_cache in the project's folder)",
    )
    parser.add_argument(
        "--stdin-filename",
        type=Path,
        metavar="PATH",
        help="check standard input as this file: its configuration, per-file-ignores and the name in "
        "messages (implies reading standard input, like the path -)",
    )
    parser.add_argument(
        "--show-settings",
        action="store_true",
        help="print the settings the first file would be checked with, and where each comes from",
    )
    parser.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="colour the text output: auto (default: on a terminal, unless NO_COLOR is set or "
        "FORCE_COLOR asks), always or never",
    )
