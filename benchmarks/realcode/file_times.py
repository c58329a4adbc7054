"""The CPU time `shardls check` spends on each file of a repository, for finding the slowest.

    .venv/bin/python benchmarks/realcode/file_times.py /work/realcode/maxtext --top 10
    .venv/bin/python benchmarks/realcode/file_times.py /work/realcode/flax --json times.json

`shardls check` analyses files in worker processes, so its own run cannot say what each file
cost. This runs the same per-file function (`check_files.check_file`, with the settings `check`
would use for the file and --no-cache) in this one process, file after file, and measures each
with `time.process_time`. The workspace is indexed first (`Analyzer.index_workspace`, what
`check` does before its workers fork), and that time is reported on its own line, so that it is
not charged to whichever file happens to come first. As in `check`, everything runs below one
roomy frame (`shardls.frames`) with the garbage collector run after each file (`cli/collector.py`,
charged to that file). `run.py --slowest N` runs this for each
repository. Nothing of the repository is run or imported.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shardls.cli.check_files import CheckJob


def file_times(repository: Path) -> tuple[float, dict[str, float]]:
    """The indexing time, and each file's analysis time (CPU seconds), as `check .` in it."""
    from shardls.cli import check_cmd
    from shardls.cli.main import build_parser

    os.chdir(repository)
    args = build_parser().parse_args(["check", "--no-cache", "."])
    jobs = check_cmd._jobs(args)
    try:
        from shardls.cli.collector import collected_by_file, settle
        from shardls.frames import in_roomy_frame
    except ImportError:  # a shardls older than both (run.py --commit): its check had neither
        return _timed(jobs, lambda: None)
    with collected_by_file():
        return in_roomy_frame(_timed, jobs, settle)


def _timed(jobs: Sequence[CheckJob], settle: Callable[[], None]) -> tuple[float, dict[str, float]]:
    from shardls.cli import check_files

    start = time.process_time()
    check_files._index_workspaces(jobs)
    settle()
    indexing = time.process_time() - start
    times = {}
    for job in jobs:
        start = time.process_time()
        check_files.check_file(job)
        settle()
        times[job.display] = time.process_time() - start
    return indexing, times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repository", type=Path)
    parser.add_argument("--top", type=int, default=10, help="how many of the slowest files to print (10)")
    parser.add_argument("--json", type=Path, help="write every file's time to this file")
    args = parser.parse_args(argv)
    indexing, times = file_times(args.repository.resolve())
    if args.json is not None:
        args.json.write_text(json.dumps({"indexing": indexing, "files": times}, indent=2) + "\n")
    print(f"workspace index: {indexing:.2f} s; {len(times)} files: {sum(times.values()):.2f} s")
    for path, seconds in sorted(times.items(), key=lambda item: -item[1])[: args.top]:
        print(f"{seconds:8.2f} s  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
