"""What sharding in types costs: analysis time with type propagation against the same analysis
without it, on the same files, in one run (a ratio, never a timed test).

    .venv/bin/python benchmarks/bench_types.py [FILE ...]

Target (issue #13): propagation adds at most 20% to the analysis time, i.e. a ratio <= 1.20 on
the generated benchmark models (whose `jax.make_mesh` gives Explicit axes, so every statement is
typed), the bundled examples, and any real files given on the command line.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate_models import write

from shardls.analysis.analyzer import Analyzer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
RUNS = 7


def best_of(runs: int, action: Callable[[], object]) -> float:
    """The least CPU time of `runs` runs: on a shared machine the CPU time of this process is
    what the other processes disturb least."""
    times = []
    for _ in range(runs):
        start = time.process_time()
        action()
        times.append(time.process_time() - start)
    return min(times)


def measure(name: str, path: Path) -> tuple[float, float]:
    """Both configurations alternate run by run, so that a change in the machine's load hits
    both alike."""
    text = path.read_text()
    with_types = without = float("inf")
    for _ in range(RUNS):
        with_types = min(with_types, best_of(1, lambda: Analyzer().analyze(str(path), text)))
        without = min(without, best_of(1, lambda: Analyzer(sharded_types=False).analyze(str(path), text)))
    typed = sum(1 for s in Analyzer().analyze(str(path), text).sites if s.jax_type is not None)
    print(
        f"{name:<40} without {without * 1e3:8.1f} ms | with {with_types * 1e3:8.1f} ms | "
        f"ratio {with_types / without:5.2f} (target <= 1.20) | typed sites {typed}"
    )
    return with_types, without


def main(argv: list[str]) -> int:
    totals = [0.0, 0.0]
    with tempfile.TemporaryDirectory() as directory:
        files = [
            (f"generated {size // 1000}k lines", write(Path(directory), size))
            for size in (1_000, 5_000, 20_000)
        ]
        files += [(f"examples/{p.name}", p) for p in sorted(EXAMPLES.glob("*.py"))]
        files += [(Path(a).name, Path(a)) for a in argv]
        for name, path in files:
            with_types, without = measure(name, path)
            totals[0] += with_types
            totals[1] += without
    print(f"{'all files':<40} ratio {totals[0] / totals[1]:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
