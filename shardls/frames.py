"""Run deeply recursive work (an analysis) where CPython does not map and unmap memory for its frames.

CPython 3.11 and later keep a thread's Python frames on a stack of 16 KiB chunks. A call that does
not fit in the current chunk maps a new one (`mmap`), and when that call returns the chunk is
unmapped again (`munmap`): recursion that goes up and down across a chunk's end pays a system
call pair and a page fault on every crossing. Where the ends fall depends on how deep the caller
already is, so the same analysis can cross one thousands of times in one process and hundreds of
thousands in another: `shardls check` of jax-llm-examples mapped 680,000 chunks in its two worker
processes (4.9 s of system time against 4.8 s of user time), and 40,000 in one process.

`in_roomy_frame` calls a function from a frame that declares a stack of 512 KiB. That frame gets a
chunk of its own, of 1 MiB, and the frames of everything it calls fit in the rest of that chunk
(about 2,000 frames, deeper than the recursion limit), so no chunk's end is crossed below it. On
Python 3.10, whose frames are separate objects, the frame is merely larger.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")

ROOM = 65_536
"""Stack slots (8 bytes each) the roomy frame declares beyond what its own code needs."""


def _call(function: Callable[..., object], *args: object, **kwargs: object) -> object:
    return function(*args, **kwargs)


_roomy_call = types.FunctionType(
    _call.__code__.replace(co_stacksize=_call.__code__.co_stacksize + ROOM), _call.__globals__, "_roomy_call"
)


def in_roomy_frame(function: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """`function(*args, **kwargs)`, called below a frame with room for its whole recursion."""
    result: _R = _roomy_call(function, *args, **kwargs)
    return result
