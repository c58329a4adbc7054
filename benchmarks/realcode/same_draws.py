"""The sites `run.py --sample` drew from one saved run, looked up in another: how many of the very
same sites each run resolves.

A change that adds sites (a pytree split into leaves, a second value a body may return) moves
every later draw, so `--sample` over the new run draws other sites; this answers for the draws of
the old one. A site is found again by repository, place and kind (and name, where several sites
share a place); one split into several counts as resolved only when every part is.

    .venv/bin/python benchmarks/realcode/same_draws.py before/ after/             # seeds 0-4, 100 each
    .venv/bin/python benchmarks/realcode/same_draws.py before/ after/ --arrays-only --show
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from run import layout_class, sample_population

_RESOLVED = ("full", "symbolic")


def _documents(folder: Path) -> dict[str, dict[str, Any]]:
    return {
        p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json")) if not p.name.startswith("_")
    }


def _place(name: str, layout: dict[str, Any]) -> tuple[object, ...]:
    return (name, layout["path"], layout.get("cell"), layout["line"], layout["column"], layout["kind"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="the run whose sites are drawn (run.py --save DIR)")
    parser.add_argument("after", type=Path, help="the run they are looked up in")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--arrays-only", action="store_true", help="draw only sites that carry an array")
    parser.add_argument("--show", action="store_true", help="list the drawn sites whose class changed")
    args = parser.parse_args(argv)
    before, after = _documents(args.before), _documents(args.after)
    found: dict[tuple[object, ...], list[dict[str, Any]]] = defaultdict(list)
    for name, document in after.items():
        for layout in document.get("layouts", []):
            found[_place(name, layout)].append(layout)
    population = [(n, layout) for n, layout in sample_population(before, args.arrays_only) if n in after]
    totals = [0, 0]
    for seed in args.seeds:
        drawn = random.Random(seed).sample(population, min(args.size, len(population)))
        counts = [0, 0]
        for name, layout in drawn:
            candidates = found.get(_place(name, layout), [])
            again = [c for c in candidates if c["name"] == layout["name"]] or candidates
            was = layout_class(layout) in _RESOLVED
            now = bool(again) and all(layout_class(c) in _RESOLVED for c in again)
            counts[0] += was
            counts[1] += now
            if args.show and was != now:
                print(
                    f"  seed {seed}: {name}/{layout['path']}:{layout['line']} {layout['kind']} {layout['name']}: {was} -> {now}"
                )
        print(f"seed {seed}: {counts[0]} -> {counts[1]} of {len(drawn)} resolved")
        totals = [totals[0] + counts[0], totals[1] + counts[1]]
    drawn_in_all = min(args.size, len(population)) * len(args.seeds)
    print(
        f"all seeds: {totals[0]} -> {totals[1]} of {drawn_in_all} ({100 * totals[0] / drawn_in_all:.1f} % -> {100 * totals[1] / drawn_in_all:.1f} %)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
