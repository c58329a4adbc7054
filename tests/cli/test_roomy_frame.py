"""`in_roomy_frame`: what it calls behaves as if called directly, and recursion below it maps no
frame memory (the system time and page faults that made `check`'s workers cost twice a serial run)."""

from __future__ import annotations

import platform
import sys

import pytest

from shardls.frames import in_roomy_frame

resource = pytest.importorskip("resource")

DEPTH = 300
"""Frames of `_down` this deep fill more than one 16 KiB chunk of CPython's frame stack."""


def _down(depth: int) -> int:
    return 0 if depth == 0 else _down(depth - 1) + 1


def _up_and_down(times: int) -> int:
    return sum(_down(DEPTH) for _ in range(times))


def _page_faults(times: int, roomy: bool) -> int:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    total = in_roomy_frame(_up_and_down, times) if roomy else _up_and_down(times)
    assert total == DEPTH * times
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)


def test_the_result_and_the_exceptions_pass_through() -> None:
    assert in_roomy_frame(divmod, 7, 2) == (3, 1)
    assert in_roomy_frame(sorted, [3, 1, 2], reverse=True) == [3, 2, 1]
    with pytest.raises(ZeroDivisionError):
        in_roomy_frame(divmod, 1, 0)
    assert in_roomy_frame(_down, 800) == 800  # room for recursion near the limit


@pytest.mark.skipif(
    platform.python_implementation() != "CPython" or sys.version_info < (3, 11),
    reason="CPython's frame stack in chunks is 3.11's",
)
def test_recursion_below_a_roomy_frame_maps_no_frame_memory() -> None:
    """Directly, every descent maps a chunk and touches it (a page fault at least); below the
    roomy frame, none does."""
    times = 5_000
    assert _page_faults(times, roomy=False) > times * 0.8
    assert _page_faults(times, roomy=True) < times * 0.1
