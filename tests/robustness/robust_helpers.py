"""Bounds every robustness test holds the analysis to, and small helpers to measure them.

No bound here is a time: CI runs on a busy 2-core machine, where an analysis that takes 50 ms
alone can take seconds. The work is bounded by the analyzer's own step budgets, which
`StepMeter` counts; a time limit is only a hang limit (`HANG`), far above any honest run. The
timings themselves are benchmarks (benchmarks/bench_robustness.py). The numbers are documented
in docs/security.md; change them there too.
"""

from __future__ import annotations

import ast
import contextlib
import signal
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
from lsp_helpers import HANG

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.evaluator import Evaluator, Frame, Limits
from shardls.analysis.facts import FileAnalysis, Site
from shardls.analysis.workspace_meshes import WORKSPACE_SCAN_STEPS

__all__ = ["HANG"]

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


class StepMeter:
    """Counts the analyzer's work while installed: every evaluation step (`Evaluator.eval`), the
    walker's steps charged with `Evaluator.spend`, and the questions asked (`Evaluator.evaluate`
    from outside a question; each may overshoot its budget by the one step that stops it)."""

    def __init__(self) -> None:
        self.steps = 0
        self.questions = 0

    @contextlib.contextmanager
    def installed(self) -> Iterator[StepMeter]:
        evaluate, eval_, spend = Evaluator.evaluate, Evaluator.eval, Evaluator.spend

        def counted_evaluate(evaluator: Evaluator, node: ast.expr, frame: Frame) -> Any:
            if not evaluator._asking:
                self.questions += 1
            return evaluate(evaluator, node, frame)

        def counted_eval(evaluator: Evaluator, node: ast.expr, frame: Frame) -> Any:
            if evaluator._asking:
                self.steps += 1
            return eval_(evaluator, node, frame)

        def counted_spend(evaluator: Evaluator, steps: int) -> bool:
            self.steps += steps
            return spend(evaluator, steps)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(Evaluator, "evaluate", counted_evaluate)
            patch.setattr(Evaluator, "eval", counted_eval)
            patch.setattr(Evaluator, "spend", counted_spend)
            yield self


def step_bound(text: str, files: int = 1) -> int:
    """The most work the budgets allow for analysing `text`: its file budget, and the one
    budget of the search for the workspace's mesh in the other files."""
    return Limits().file_budget(len(text)) + WORKSPACE_SCAN_STEPS * min(files - 1, 1)


def analyze_within(
    text: str, path: str = "/virtual/model.py", analyzer: Analyzer | None = None
) -> FileAnalysis:
    """Analyse (with a fresh Analyzer unless one is given); fails the test when the work exceeds
    the budgets or the analysis hangs."""
    meter = StepMeter()
    with deadline(HANG), meter.installed():
        result = (analyzer or Analyzer()).analyze(path, text)
    allowed = step_bound(text, files=2) + meter.questions
    assert meter.steps <= allowed, f"{meter.steps} evaluation steps (budgets allow {allowed})"
    return result


@contextlib.contextmanager
def deadline(seconds: float = HANG) -> Iterator[None]:
    """Raise TimeoutError in the block after `seconds` (an endless loop fails instead of hanging).
    A hang limit, not a timing: keep it at HANG unless the block has a reason to be shorter."""

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
