"""A file's analysis leaves no reference cycle holding its evaluator: when the analysis ends, the
evaluator and its memos go by reference counting. A cycle through it (a closure that called
itself, to unroll a comprehension) left them all for the garbage collector, which `check` runs
after each file over what the file left: that traversal was most of its work."""

from __future__ import annotations

import gc

from analysis_helpers import analyze

from shardls.analysis.evaluator import Evaluator

SOURCE = """\
import jax
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
axes = [name for name in ("data", "model") if name != "model"]
shapes = {name: size * 2 for name, size in zip(("a", "b"), (4, 8))}
x = jax.device_put(jax.numpy.zeros((8, 16)), NamedSharding(mesh, P(*axes)))
"""


def test_an_analysis_with_comprehensions_leaves_no_cycle_holding_its_evaluator() -> None:
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        assert analyze(SOURCE).sites
        gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds unreachable is kept, to look at
        gc.collect()
        held = [o for o in gc.garbage if isinstance(o, Evaluator)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
    assert not held
