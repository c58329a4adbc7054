"""Compare two saved runs of `run.py --save DIR`: are the diagnostics and layouts the same?

    .venv/bin/python benchmarks/realcode/compare.py before/ after/
    .venv/bin/python benchmarks/realcode/compare.py before/ after/ --show 20
    .venv/bin/python benchmarks/realcode/compare.py before/ after/ --ignore uses

A speed-up must not change what `shardls check` reports, so each optimisation is checked by
saving the JSON of every repository before and after it and comparing them here. Entries are
compared as whole JSON objects, matched by position (path, cell, line, column) and then by
content: for each repository it prints whether the output is byte for byte the same, and
otherwise how many diagnostics and layouts only one side has, and the first of them. The
exception the speed issue allows is a site a step budget used to drop (it then appears only
after); those are listed like any other difference, for a person to judge. Exit status 1 when
any repository differs. `--ignore KEY` leaves a key out of every entry on both sides (a key
added to the JSON since `before` was saved would otherwise make every entry differ).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SECTIONS = ("diagnostics", "layouts")


def _canonical(entry: dict[str, Any], ignored: frozenset[str] = frozenset()) -> str:
    return json.dumps({k: v for k, v in entry.items() if k not in ignored}, sort_keys=True)


def _where(entry: dict[str, Any]) -> str:
    cell = "" if entry.get("cell") is None else f"[cell {entry['cell']}]"
    what = entry.get("code") or entry.get("kind")
    return f"{entry['path']}{cell}:{entry['line']}:{entry['column']} {what}"


def differences(
    before: dict[str, Any], after: dict[str, Any], ignored: frozenset[str] = frozenset()
) -> dict[str, tuple[list[Any], list[Any]]]:
    """Per section, the entries only `before` has and those only `after` has (as multisets),
    without the `ignored` keys."""
    found = {}
    for section in SECTIONS:
        old = Counter(_canonical(e, ignored) for e in before.get(section, []))
        new = Counter(_canonical(e, ignored) for e in after.get(section, []))
        gone = [json.loads(text) for text in (old - new).elements()]
        added = [json.loads(text) for text in (new - old).elements()]
        found[section] = (gone, added)
    return found


def compare(before: Path, after: Path, show: int, ignored: frozenset[str] = frozenset()) -> bool:
    """Print the comparison of every repository both folders hold; True when all are the same."""
    names = sorted(
        p.stem for p in before.glob("*.json") if not p.name.startswith("_") and (after / p.name).exists()
    )
    if not names:
        print(f"no repository saved in both {before} and {after}")
        return False
    same = True
    for name in names:
        old_bytes, new_bytes = (before / f"{name}.json").read_bytes(), (after / f"{name}.json").read_bytes()
        if old_bytes == new_bytes:
            print(f"{name}: identical")
            continue
        found = differences(json.loads(old_bytes), json.loads(new_bytes), ignored)
        if not any(gone or added for gone, added in found.values()):
            print(f"{name}: same entries, in another order")
            same = False
            continue
        same = False
        summary = ", ".join(
            f"{section} -{len(gone)} +{len(added)}" for section, (gone, added) in found.items()
        )
        print(f"{name}: DIFFERENT ({summary})")
        for section, (gone, added) in found.items():
            for sign, entries in (("-", gone), ("+", added)):
                for entry in sorted(entries, key=_where)[:show]:
                    print(f"  {sign} {section[:-1]} {_where(entry)}")
                    print(f"      {_canonical(entry)[:400]}")
    return same


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="a folder saved with run.py --save")
    parser.add_argument("after", type=Path, help="another one")
    parser.add_argument("--show", type=int, default=10, help="differences shown per section and side (10)")
    parser.add_argument(
        "--ignore", action="append", default=[], metavar="KEY", help="leave this key out of every entry"
    )
    args = parser.parse_args(argv)
    return 0 if compare(args.before, args.after, args.show, frozenset(args.ignore)) else 1


if __name__ == "__main__":
    sys.exit(main())
