"""`shardls check`: every sharding problem in files, folders or a whole project, without JAX.

shardls check src/ notebooks/ --device-count 16 --output-format concise

Each path uses the configuration found from it upward (`--config` names one for all); flags
override the configuration, and pragmas in a file override both. Exit status: 0 when no
error-level diagnostic, 1 when there is one, 2 for bad usage or configuration.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from shardls.cli.check_files import CheckJob, FileReport, check_files
from shardls.cli.command import EXIT_OK, EXIT_PROBLEMS, Subparsers, UsageError
from shardls.cli.output import FORMATS, LAYOUT_FORMATS, OutputOptions
from shardls.cli.output.statistics import FORMATS as STATISTICS_FORMATS
from shardls.cli.output.statistics import write_statistics
from shardls.cli.settings_args import add_settings_arguments, config_and_layer
from shardls.config import merge_settings, workspace_root
from shardls.core import Severity
from shardls.files import discover, display_path
from shardls.globs import PatternSet

NAME = "check"


def add_parser(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        NAME,
        help="report sharding problems in Python files and notebooks",
        description="Find what JAX would reject about how arrays are sharded, in files and folders, "
        "without running them.",
    )
    parser.add_argument(
        "paths", nargs="*", type=Path, metavar="PATH", help="files or folders to check (default: .)"
    )
    add_settings_arguments(parser)
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip files and folders matching a gitignore-style pattern (repeatable; adds to the "
        "configuration's exclude)",
    )
    parser.add_argument(
        "--output-format",
        choices=list(FORMATS),
        default="full",
        help="full (default): with source and hints; concise: one line each; json; github "
        "(Actions annotations); sarif",
    )
    parser.add_argument(
        "--show-layouts", action="store_true", help="also print every array's layout (full, concise, json)"
    )
    parser.add_argument(
        "--statistics", action="store_true", help="count the diagnostics of each code instead of listing them"
    )


def run(args: argparse.Namespace) -> int:
    if args.show_layouts and args.output_format not in LAYOUT_FORMATS:
        raise UsageError(f"--show-layouts works with {', '.join(sorted(LAYOUT_FORMATS))} output only")
    if args.statistics and args.output_format not in STATISTICS_FORMATS:
        raise UsageError(f"--statistics works with {', '.join(sorted(STATISTICS_FORMATS))} output only")
    reports = check_files(_jobs(args))
    if not reports:
        print("shardls check: warning: no Python files or notebooks found", file=sys.stderr)
    for report in reports:
        if report.internal_error:
            print(
                f"shardls check: internal error while analysing {report.path} (please report it): "
                f"{report.internal_error}",
                file=sys.stderr,
            )
    if args.statistics:
        write_statistics(reports, args.output_format, sys.stdout)
    else:
        FORMATS[args.output_format](reports, OutputOptions(args.show_layouts), sys.stdout)
    return EXIT_PROBLEMS if _failed(reports) else EXIT_OK


def _jobs(args: argparse.Namespace) -> list[CheckJob]:
    """One job per file, each with the settings of its configuration (a file is checked once)."""
    cli_exclude = PatternSet.parse(Path.cwd(), [p for text in args.exclude for p in text.split(",")])
    jobs: dict[Path, CheckJob] = {}
    for path in args.paths or [Path(".")]:
        if not path.exists():
            raise UsageError(f"{path}: no such file or folder")
        config, layer = config_and_layer(args, path)
        settings = merge_settings(config.layer, layer)
        exclude = [cli_exclude]
        if config.root is not None:
            exclude.append(PatternSet.parse(config.root, config.exclude))
        roots = workspace_root(path, config)
        for file in discover([path], exclude):
            jobs.setdefault(file, CheckJob(file, display_path(file), settings, (roots,)))
    return sorted(jobs.values(), key=lambda job: job.display)


def _failed(reports: Sequence[FileReport]) -> bool:
    return any(
        report.internal_error or any(d.severity is Severity.ERROR for d in report.diagnostics)
        for report in reports
    )
