#!/usr/bin/env python3
"""A long fuzzing run (≥ 20,000 inputs) of the analyzer, `shardls check` and a live language
server; see docs/security.md.

    .venv/bin/python benchmarks/fuzz_long.py --inputs 20000 [--seed 1] [--no-server]

Inputs: every example and corpus file cut after and in the middle of every line, mutants of them
(deleted, duplicated and moved tokens, swapped brackets, random bytes), JAX-flavoured and
grammar-generated programs (hypothesis), and a share of mutants through `shardls check`
in-process. Each must be answered without an exception within TIME_BOUND (2 s). Every input is
also sent to one `shardls serve` process as the new text of an open document, followed by 7
requests (hovers at random positions, inlay hints, diagnostics, a code action on a diagnostic,
completion; tests/robustness/fuzz_server.py): none may fail, hang or take TIME_BOUND.

A failing input is written to benchmarks/fuzz-failures/ (make it a test in
tests/robustness/test_regressions.py); for the server, with the input before it (the server's
caches hold it). The exit status is 1 if there was any failure.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests" / "robustness"), str(HERE.parent / "tests" / "server")]

from fuzz_inputs import PROGRAMS, mutations, python_programs, seed_files, truncations  # noqa: E402
from fuzz_server import ServerFuzzer  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis.strategies import SearchStrategy  # noqa: E402

from shardls.analysis.analyzer import Analyzer  # noqa: E402
from shardls.cli.main import main  # noqa: E402

FAILURES = HERE / "fuzz-failures"
TIME_BOUND = 2.0
"""Seconds one input may take (analysis of a file up to 64 KB, one LSP request, one `check`):
a target for this run on a quiet machine (docs/security.md); CI's tests bound work, not time."""


class Run:
    def __init__(self, server: ServerFuzzer | None, rng: random.Random) -> None:
        self.counts: Counter[str] = Counter()
        self.failures = 0
        self.slowest = (0.0, "")
        self.times: list[float] = []
        self.server = server
        self.rng = rng
        self.previous = ""

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
            self._failed(channel, text, problem)
        if self.server is not None:
            self._serve(text)

    def _serve(self, text: str) -> None:
        assert self.server is not None
        try:
            self.server.feed(text, self.rng)
        except Exception:  # ServerFailure, or a bug of the fuzzer itself: both are reported
            self._failed("server", text, traceback.format_exc(), self.previous)
        self.previous = text

    def _failed(self, channel: str, text: str, problem: str, previous: str | None = None) -> None:
        self.failures += 1
        FAILURES.mkdir(exist_ok=True)
        (FAILURES / ".gitignore").write_text("*\n")  # scratch: neither committed nor linted
        name = FAILURES / f"{channel}-{self.total}.py"
        name.write_text(text, encoding="utf-8", errors="surrogatepass")
        if previous is not None:
            name.with_suffix(".previous.py").write_text(previous, encoding="utf-8", errors="surrogatepass")
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

    def report(self, elapsed: float) -> None:
        print(
            f"\n{self.total} inputs in {elapsed:.0f} s: "
            + ", ".join(f"{k} {v}" for k, v in self.counts.items())
        )
        print(f"per input: {_spread(self.times)}, slowest {self.slowest[0]:.2f} s")
        if self.server is not None:
            server = self.server
            print(
                f"server: {server.inputs} inputs, {server.requests} requests, per request "
                f"{_spread(server.latencies)}, slowest {max(server.latencies, default=0):.2f} s; "
                f"{server.restarts} restarts (hangs or crashes)"
            )
        print(f"failures: {self.failures}")


def _spread(times: list[float]) -> str:
    ordered = sorted(times) or [0.0]
    return f"median {ordered[len(ordered) // 2] * 1000:.1f} ms, p99 {ordered[int(len(ordered) * 0.99)] * 1000:.1f} ms"


def _feed_programs(state: Run, strategy: SearchStrategy[str], channel: str, count: int) -> None:
    @settings(max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def feed(program: str) -> None:
        state.feed(channel, program)

    feed()


def run(inputs: int, seed: int, server: bool = True) -> int:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix="shardls-fuzz-") as root:
        state = Run(ServerFuzzer(Path(root), slow=TIME_BOUND) if server else None, random.Random(seed + 1))
        started = time.perf_counter()
        _feed_all(state, inputs, rng)
        if state.server is not None:
            for problem in state.server.close():
                state.failures += 1
                print(f"FAILURE (server): {problem}", flush=True)
        state.report(time.perf_counter() - started)
    return 1 if state.failures else 0


def _feed_all(state: Run, inputs: int, rng: random.Random) -> None:
    texts = [path.read_text() for path in seed_files()]
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


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--inputs", type=int, default=20_000, help="at least this many inputs (default 20000)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the mutations")
    parser.add_argument(
        "--no-server", dest="server", action="store_false", help="only the analyzer and check, not the server"
    )
    return parser.parse_args()


if __name__ == "__main__":
    warnings.filterwarnings("ignore", category=SyntaxWarning)  # hypothesmith compiles what it generates
    arguments = parse()
    sys.exit(run(arguments.inputs, arguments.seed, arguments.server))
