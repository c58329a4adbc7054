"""`shardls check`: every sharding problem in files, folders or a whole project, without JAX.

shardls check src/ notebooks/ --device-count 16 --output-format concise

Each path uses the configuration found from it upward (`--config` names one for all); flags
override the configuration, and pragmas in a file override both. Exit status: 0 when no
error-level diagnostic (or with --exit-zero), 1 when there is one, 2 for bad usage or
configuration, or when shardls itself failed on a file.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from shardls.cli.check_cache import cache_dir_of
from shardls.cli.check_files import CheckJob, FileReport, check_files, forget_analyses
from shardls.cli.check_fix import add_fix_arguments, check_fix_usage, run_fixes
from shardls.cli.check_options import add_run_arguments
from shardls.cli.command import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, Subparsers, UsageError
from shardls.cli.output import FORMATS, LAYOUT_FORMATS, OutputOptions, writer
from shardls.cli.output.statistics import FORMATS as STATISTICS_FORMATS
from shardls.cli.output.statistics import write_statistics
from shardls.cli.settings_args import add_settings_arguments, config_and_layer
from shardls.cli.terminal import use_color
from shardls.config import Config, merge_settings, workspace_root
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
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="files or folders to check (default: .); - reads standard input",
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
        "(Actions annotations); sarif; gitlab (Code Quality); junit (XML)",
    )
    parser.add_argument(
        "--show-layouts", action="store_true", help="also print every array's layout (full, concise, json)"
    )
    parser.add_argument(
        "--statistics", action="store_true", help="count the diagnostics of each code instead of listing them"
    )
    add_fix_arguments(parser)
    add_run_arguments(parser)


def run(args: argparse.Namespace) -> int:
    _check_usage(args)
    if args.show_settings:
        return _show_settings(args)
    if args.watch:
        from shardls.cli.watch import watch

        return watch(lambda: _check_once(args), lambda: _watched(args), quiet=args.quiet or args.silent)
    return _check_once(args)


def _check_usage(args: argparse.Namespace) -> None:
    if args.show_layouts and args.output_format not in LAYOUT_FORMATS:
        raise UsageError(f"--show-layouts works with {', '.join(sorted(LAYOUT_FORMATS))} output only")
    if args.statistics and args.output_format not in STATISTICS_FORMATS:
        raise UsageError(f"--statistics works with {', '.join(sorted(STATISTICS_FORMATS))} output only")
    if _reads_stdin(args) and args.watch:
        raise UsageError("--watch watches files, so it cannot check standard input")
    if STDIN in args.paths and len(args.paths) > 1 and args.stdin_filename is None:
        raise UsageError("'-' (standard input) cannot be checked together with other paths")
    check_fix_usage(args)


def _check_once(args: argparse.Namespace) -> int:
    """One check of every path: print what the options ask for and return the exit status."""
    if args.no_cache:
        forget_analyses()
    jobs = _jobs(args)
    reports = check_files(jobs)
    if args.fix or args.diff:
        fixed = run_fixes(args, jobs, reports, [] if _reads_stdin(args) else args.paths or [Path(".")])
        if isinstance(fixed, int):
            return fixed
        reports = fixed
    if not reports and not (args.quiet or args.silent):
        print("shardls check: warning: no Python files or notebooks found", file=sys.stderr)
    for report in reports:
        if report.internal_error:
            print(
                f"shardls check: internal error while analysing {report.path} (please report it): "
                f"{report.internal_error}",
                file=sys.stderr,
            )
    if not args.silent:
        options = OutputOptions(
            args.show_layouts, color=use_color(sys.stdout, args.color), summary=not args.quiet
        )
        if args.statistics:
            write_statistics(reports, args.output_format, sys.stdout)
        else:
            writer(args.output_format)(reports, options, sys.stdout)
        sys.stdout.flush()
    return exit_status(reports, args.exit_zero)


def exit_status(reports: Sequence[FileReport], exit_zero: bool = False) -> int:
    """2 when shardls failed on a file (never 1: CI must not read a crash as findings), else 1
    for an error-level diagnostic unless --exit-zero, else 0."""
    if any(report.internal_error for report in reports):
        return EXIT_USAGE
    if exit_zero:
        return EXIT_OK
    failed = any(d.severity is Severity.ERROR for report in reports for d in report.diagnostics)
    return EXIT_PROBLEMS if failed else EXIT_OK


STDIN = Path("-")


def _reads_stdin(args: argparse.Namespace) -> bool:
    """As ruff: `-` as the only path, or any --stdin-filename (other paths are then ignored)."""
    return args.stdin_filename is not None or args.paths == [STDIN]


def _stdin_file(args: argparse.Namespace) -> tuple[Path, str]:
    """Where standard input is checked as (the --stdin-filename, or `-` in the working
    directory) and how messages name it."""
    named: Path | None = args.stdin_filename
    if named is None:
        return Path.cwd() / "-", "-"
    return Path(os.path.abspath(named)), display_path(named)


def _stdin_job(args: argparse.Namespace) -> CheckJob:
    ignored = [path for path in args.paths if path != STDIN]
    if ignored and not args.silent:
        print(f"shardls check: warning: ignoring {ignored[0]} in favour of standard input", file=sys.stderr)
    path, display = _stdin_file(args)
    config, layer = config_and_layer(args, path.parent)
    settings = merge_settings(config.layer, layer, file=path)
    return CheckJob(path, display, settings, (workspace_root(path.parent, config),), _read_stdin())


def _read_stdin() -> bytes:
    binary = getattr(sys.stdin, "buffer", None)
    return binary.read() if binary is not None else sys.stdin.read().encode("utf-8")


def _jobs(args: argparse.Namespace) -> list[CheckJob]:
    """One job per file, each with the settings of its configuration and its per-file-ignores
    (a file is checked once)."""
    if _reads_stdin(args):
        return [_stdin_job(args)]
    cli_exclude = PatternSet.parse(Path.cwd(), [p for text in args.exclude for p in text.split(",")])
    jobs: dict[Path, CheckJob] = {}
    for path in args.paths or [Path(".")]:
        if not path.exists():
            raise UsageError(f"{path}: no such file or folder")
        config, layer = config_and_layer(args, path)
        exclude = [cli_exclude]
        if config.root is not None:
            exclude.append(PatternSet.parse(config.root, config.exclude))
        roots = workspace_root(path, config)
        cache_dir = _cache_dir(args, config)
        for file in discover([path], exclude):
            if file not in jobs:
                settings = merge_settings(config.layer, layer, file=file)
                jobs[file] = CheckJob(file, display_path(file), settings, (roots,), cache_dir=cache_dir)
    return sorted(jobs.values(), key=lambda job: job.display)


def _cache_dir(args: argparse.Namespace, config: Config) -> Path | None:
    """Where the results of files under `config` are cached (None with --no-cache)."""
    if args.no_cache:
        return None
    return cache_dir_of(args.cache_dir, config.cache_dir, config.root or Path.cwd())


def _watched(args: argparse.Namespace) -> list[Path]:
    """What --watch polls: every file a check reads, and the configuration files that apply."""
    configs = {
        config.path
        for path in args.paths or [Path(".")]
        if (config := config_and_layer(args, path)[0]).path is not None
    }
    return [*(job.path for job in _jobs(args)), *sorted(configs)]


def _show_settings(args: argparse.Namespace) -> int:
    if _reads_stdin(args):
        file, display = _stdin_file(args)
        start = file.parent
    else:
        first = next(iter(_jobs(args)), None)
        if first is None:
            raise UsageError("no Python files or notebooks found to show the settings of")
        file, display, start = first.path, first.display, first.path
    config, layer = config_and_layer(args, start)
    settings = merge_settings(config.layer, layer, file=file)
    from shardls.cli.show_settings import write_settings  # the renderings only this option needs

    write_settings(
        display, config, (config.layer, layer), settings, workspace_root(start, config), sys.stdout
    )
    return EXIT_OK
