"""The `--fix`, `--unsafe-fixes` and `--diff` flags of `shardls check` (the work is in
`shardls.cli.fix_files`).

As in ruff: `--fix` writes the certain fixes and reports what remains, the exit status following
what remains; `--diff` prints the changes `--fix` would make, writes nothing, and exits 1 when
there is one. With standard input, `--fix` prints the fixed text on standard output and the
report on standard error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from shardls.cli.check_files import CheckJob, FileReport
from shardls.cli.command import EXIT_OK, EXIT_PROBLEMS, UsageError
from shardls.core import Severity

if TYPE_CHECKING:
    from shardls.cli.fix_files import FixRun


def add_fix_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--fix",
        action="store_true",
        help="apply the fixes that are certain (see --unsafe-fixes), then report what remains",
    )
    parser.add_argument(
        "--unsafe-fixes",
        action="store_true",
        help="with --fix or --diff, also apply a fix that is a guess when it is a diagnostic's only "
        "one (the axis a typo probably meant, `with jax.set_mesh(mesh):` for `with mesh:`)",
    )
    parser.add_argument(
        "--diff",
        action="store_true",
        help="print the changes --fix would make as a unified diff and change nothing "
        "(exit status 1 when there is one)",
    )


def check_fix_usage(args: argparse.Namespace) -> None:
    if args.fix and args.diff:
        raise UsageError("--fix writes the changes and --diff only shows them: choose one")
    if args.diff and args.watch:
        raise UsageError("--diff shows the changes once, so it cannot be combined with --watch")
    if args.unsafe_fixes and not (args.fix or args.diff):
        raise UsageError("--unsafe-fixes goes with --fix or --diff")


def run_fixes(
    args: argparse.Namespace, jobs: Sequence[CheckJob], reports: Sequence[FileReport], paths: Sequence[Path]
) -> list[FileReport] | int:
    """Apply (or show) the fixes: the reports that remain to print, or the exit status of --diff
    (which prints no report). The fixes are imported here: a check without these flags, the
    usual one, does not load them."""
    from shardls.cli.fix_files import fix_files, plural, write_diff, write_fixed

    run = fix_files(jobs, reports, paths, args.unsafe_fixes)
    talk = not (args.quiet or args.silent)
    if args.diff:
        write_diff(run.fixed, sys.stdout)
        sys.stdout.flush()
        for problem in run.problems:
            print(f"shardls check: {problem}", file=sys.stderr)
        if talk:
            files = plural(len(run.fixed), "file")
            print(f"Would fix {plural(run.count, 'problem')} in {files}.", file=sys.stderr)
        return EXIT_PROBLEMS if run.fixed else EXIT_OK
    if any(job.data is not None for job in jobs):
        return _fix_stdin(jobs[0], run, talk)
    written = 0
    unwritten: set[str] = set()
    for file in run.fixed:
        why = write_fixed(file, paths)
        if why:
            run.problems.append(f"{file.job.display}: {why}")
            unwritten.add(str(file.job.path))
        else:
            written += file.fixes
    for problem in run.problems:
        print(f"shardls check: {problem}", file=sys.stderr)
    after = [
        original if original.file in unwritten else report for original, report in zip(reports, run.reports)
    ]
    if talk:
        remaining = sum(len(report.diagnostics) for report in after)
        print(f"Fixed {plural(written, 'problem')} ({remaining} remaining).", file=sys.stderr)
    return after


def _fix_stdin(job: CheckJob, run: FixRun, talk: bool) -> int:
    """Standard input: the fixed text (or the text as it was) on standard output, as ruff does;
    the count on standard error, and the exit status of what remains."""
    from shardls.cli.fix_files import plural

    text = run.fixed[0].encoded() if run.fixed else job.data or b""
    sys.stdout.buffer.write(text) if hasattr(sys.stdout, "buffer") else sys.stdout.write(text.decode())
    sys.stdout.flush()
    for problem in run.problems:
        print(f"shardls check: {problem}", file=sys.stderr)
    remaining = [d for report in run.reports for d in report.diagnostics]
    if talk:
        print(f"Fixed {plural(run.count, 'problem')} ({len(remaining)} remaining).", file=sys.stderr)
    return EXIT_PROBLEMS if any(d.severity is Severity.ERROR for d in remaining) else EXIT_OK
