"""Analysis speed as ratios against `ast.parse` of the same text, measured in one run.

    .venv/bin/python benchmarks/bench_analysis.py

Targets (docs/architecture.md): a full analysis <= 2x `ast.parse`; re-analysis after a one-line
edit <= 0.2x `ast.parse` on the 20k-line file (what keeps the server responsive while typing).
The diagnostics are scored against the tagged mistakes of the generated files.
"""

from __future__ import annotations

import ast
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate_models import expected, write

from shardls.analysis.analyzer import Analyzer


def best_of(runs: int, action: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def one_line_edits(text: str) -> Callable[[], object]:
    """A different one-line edit each call (a space appended in the middle of the file), so
    every re-analysis sees new text, as typing does."""
    lines = text.split("\n")
    middle = len(lines) // 2
    analyzer = Analyzer()
    analyzer.analyze("model.py", text)

    def edit() -> object:
        lines[middle] += " "
        return analyzer.analyze("model.py", "\n".join(lines))

    return edit


def main() -> int:
    with tempfile.TemporaryDirectory() as directory:
        for size in (5_000, 20_000):
            path = write(Path(directory), size)
            text = path.read_text()
            parse = best_of(3, lambda text=text: ast.parse(text))
            full = best_of(3, lambda text=text: Analyzer().analyze("model.py", text))
            edit = best_of(5, one_line_edits(text))
            result = Analyzer().analyze("model.py", text)
            found = {(d.span.line, d.code) for d in result.diagnostics if d.severity.value == "error"}
            wanted = expected(text)
            missed, extra = wanted - found, found - wanted
            print(
                f"{size // 1000:>2}k lines: ast.parse {parse * 1e3:6.1f} ms | full analysis "
                f"{full * 1e3:6.1f} ms = {full / parse:4.2f}x (target <= 2x) | one-line edit "
                f"{edit * 1e3:6.1f} ms = {edit / parse:4.2f}x (target <= 0.2x) | sites "
                f"{len(result.sites)} | tagged mistakes {len(wanted)}: missed {len(missed)}, extra {len(extra)}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
