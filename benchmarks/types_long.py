#!/usr/bin/env python3
"""The long differential run of sharding in types (≥ 100,000 programs): shardls' propagation
against `jax.typeof` of real JAX, with the generator and both sides of
tests/core/test_types_differential.py (which runs 10,000 per CI run).

    .venv/bin/python benchmarks/types_long.py [--programs 100000] [--seed 1]

Prints the agreement, JAX's outcome classes, the codes shardls gave (every rule should be
exercised), the operations generated and the time; then the first disagreements, if any. The
exit status is 1 if there was any disagreement. JAX traces on AbstractMeshes: nothing runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "core"))

from core_types_support import run_differential  # noqa: E402


def _table(title: str, counts: Counter[str]) -> str:
    rows = ", ".join(f"{name} {n:,}" for name, n in counts.most_common())
    return f"{title:<12} {rows}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=100_000, help="how many programs (default 100,000)")
    parser.add_argument("--seed", type=int, default=1, help="the generator's seed (default 1)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    cpu = time.process_time()
    run = run_differential(args.seed, args.programs)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    agreed = run.programs - len(run.disagreements)
    print(f"programs     {run.programs:,} (seed {args.seed})")
    print(f"agreement    {agreed:,} of {run.programs:,} ({100 * agreed / max(run.programs, 1):.3f}%)")
    print(_table("jax outcome", run.outcomes))
    print(_table("codes", run.codes))
    print(_table("operations", run.operations))
    print(
        f"time         {wall:.0f} s wall, {cpu:.0f} s CPU ({1000 * cpu / max(run.programs, 1):.2f} ms per program)"
    )
    for text in run.disagreements[:10]:
        print(f"\nDISAGREEMENT {text}")
    return 1 if run.disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
