#!/usr/bin/env python3
"""A long fuzzing run (≥ 20,000 inputs) of the analyzer and `shardls check`; see docs/security.md.

    .venv/bin/python benchmarks/fuzz_long.py --inputs 20000 [--seed 1]

Inputs: every example and corpus file cut after and in the middle of every line, mutants of them
(deleted, duplicated and moved tokens, swapped brackets, random bytes), JAX-flavoured and
grammar-generated programs (hypothesis), and a share of mutants through `shardls check`
in-process. Each must be answered without an exception within TIME_BOUND (2 s). A failing input
is written to benchmarks/fuzz-failures/ (make it a test in tests/robustness/test_regressions.py);
the exit status is 1 if there was any.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "robustness"))

from fuzz_inputs import PROGRAMS, mutations, python_programs, seed_files, truncations  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis.strategies import SearchStrategy  # noqa: E402
from robust_helpers import TIME_BOUND  # noqa: E402

from shardls.analysis.analyzer import Analyzer  # noqa: E402
from shardls.cli.main import main  # noqa: E402

FAILURES = HERE / "fuzz-failures"


class Run:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.failures = 0
        self.slowest = (0.0, "")
        self.times: list[float] = []

    def feed(self, channel: str, text: str, analyzer: Analyzer | None = None) -> None:
        start = time.perf_counter()
        try:
            if channel == "check":
                self._check(text)
            else:
                (analyzer or Analyzer()).analyze("/virtual/fuzz/model.py", text)
            problem = None
        except Exception:
            problem = traceback.format_exc()
        seconds = time.perf_counter() - start
        self.counts[channel] += 1
        self.times.append(seconds)
        if seconds > self.slowest[0]:
            self.slowest = (seconds, text)
        if problem is None and seconds >= TIME_BOUND:
            problem = f"took {seconds:.2f} s (bound {TIME_BOUND} s)"
        if problem is not None:
            self.failures += 1
            FAILURES.mkdir(exist_ok=True)
            name = FAILURES / f"{channel}-{sum(self.counts.values())}.py"
            name.write_text(text, encoding="utf-8", errors="surrogatepass")
            print(f"FAILURE ({channel}) saved as {name}:\n{problem}", flush=True)

    def _check(self, text: str) -> None:
        path = Path("/tmp/shardls-fuzz-check.py")
        path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["check", str(path), "--output-format", "json", "--show-layouts"])
        if code not in (0, 1) or "internal error" in err.getvalue():
            raise RuntimeError(f"check exited {code}: {err.getvalue()}")

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _feed_programs(state: Run, strategy: SearchStrategy[str], channel: str, count: int) -> None:
    @settings(max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def feed(program: str) -> None:
        state.feed(channel, program)

    feed()


def run(inputs: int, seed: int) -> int:
    rng = random.Random(seed)
    state = Run()
    texts = [path.read_text() for path in seed_files()]
    started = time.perf_counter()
    for text in texts:  # every truncation, in one analyzer per file (as an editor would)
        analyzer = Analyzer()
        for cut in truncations(text):
            state.feed("truncation", cut, analyzer)
    generated = max(200, inputs // 10)
    for strategy, channel in ((PROGRAMS, "jax-program"), (python_programs(), "grammar-program")):
        _feed_programs(state, strategy, channel, generated // 2)
    while state.total < inputs:
        text = rng.choice(texts)
        for mutant in mutations(text, rng, 20):
            state.feed("check" if rng.random() < 0.1 else "mutant", mutant)
        if state.total % 1000 < 20:
            print(f"{state.total} inputs, {state.failures} failures", flush=True)
    elapsed = time.perf_counter() - started
    ordered = sorted(state.times)
    print(
        f"\n{state.total} inputs in {elapsed:.0f} s: "
        + ", ".join(f"{k} {v}" for k, v in state.counts.items())
    )
    print(
        f"median {ordered[len(ordered) // 2] * 1000:.1f} ms, p99 {ordered[int(len(ordered) * 0.99)] * 1000:.1f} ms, "
        f"slowest {state.slowest[0]:.2f} s; failures: {state.failures}"
    )
    return 1 if state.failures else 0


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--inputs", type=int, default=20_000, help="at least this many inputs (default 20000)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the mutations")
    return parser.parse_args()


if __name__ == "__main__":
    arguments = parse()
    sys.exit(run(arguments.inputs, arguments.seed))
