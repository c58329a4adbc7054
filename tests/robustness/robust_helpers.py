"""Bounds every robustness test holds the analysis to, and small helpers to measure them.

The numbers are documented in docs/security.md; change them there too.
"""

from __future__ import annotations

import contextlib
import signal
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis, Site

TIME_BOUND = 2.0
"""Seconds one input may take (analysis of a file up to 64 KB, one LSP request, one `check`)."""
LARGE_FILE_BOUND = 10.0
"""Seconds a file at the size bounds (1,000,000 characters or 50,000 lines) may take."""
MEMORY_BOUND = 64 * 2**20
"""Bytes of peak Python allocation (tracemalloc) one small adversarial input may cost."""

HEAD = (
    "import jax\n"
    "import jax.numpy as jnp\n"
    "from jax.sharding import NamedSharding, PartitionSpec as P\n"
    "mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
)
"""Four lines every generated program starts with: a 2×4 mesh."""
OK_SITE = "ok = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P('data')))\n"
"""A site whose per-device shape is (4, 16) whatever comes before it."""

T = TypeVar("T")


@dataclass(frozen=True)
class Measured:
    seconds: float
    peak_bytes: int


def timed(function: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


def analyze_within(text: str, path: str = "/virtual/model.py", bound: float = TIME_BOUND) -> FileAnalysis:
    """Analyse with a fresh Analyzer; fails the test when it takes longer than `bound`."""
    result, seconds = timed(lambda: Analyzer().analyze(path, text))
    assert seconds < bound, f"analysis took {seconds:.2f} s (bound {bound} s)"
    return result


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Raise TimeoutError in the block after `seconds` (an endless loop fails instead of hanging)."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def peak_allocation(function: Callable[[], object]) -> int:
    """Peak bytes allocated by Python while `function` runs."""
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def ok_site(analysis: FileAnalysis) -> Site:
    """The `ok` site of OK_SITE, which must have survived whatever else the file holds."""
    found = [site for site in analysis.sites if site.name == "ok"]
    assert len(found) == 1, [site.name for site in analysis.sites]
    assert found[0].shard_shape == (4, 16)
    return found[0]
