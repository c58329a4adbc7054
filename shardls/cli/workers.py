"""Run `check`'s analysis of many files in worker processes.

Imported only when a check has enough files to repay workers (`check_files.worker_count`):
`multiprocessing` and `concurrent.futures` are 20 ms of CPU to import, more than a warm check
of a small project spends on everything else, and a check answered from the cache, or of a few
files, starts no worker.
"""

from __future__ import annotations

import multiprocessing
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.context import BaseContext
from typing import TypeVar

J = TypeVar("J")
R = TypeVar("R")


def in_workers(
    function: Callable[[J], R], jobs: Sequence[J], workers: int, prepare: Callable[[Sequence[J]], None]
) -> list[R]:
    """`function` of each job, in order, computed by `workers` processes. `prepare(jobs)` runs
    first, in this process, when the workers are forked from it (and so inherit what it did)."""
    context = _forking()
    if context is not None:
        prepare(jobs)
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        return list(pool.map(function, jobs, chunksize=max(1, len(jobs) // (workers * 4))))


def _forking() -> BaseContext | None:
    """The `fork` start method on Linux, where workers then start as copies of this process
    (with the workspace index built here); elsewhere the platform's default (None)."""
    if sys.platform != "linux" or "fork" not in multiprocessing.get_all_start_methods():
        return None
    return multiprocessing.get_context("fork")
