"""shardls on real repositories: speed against ruff, how many layouts it resolves, what it reports.

    .venv/bin/python benchmarks/realcode/run.py                       # every folder of /work/realcode
    .venv/bin/python benchmarks/realcode/run.py ~/src/maxtext ~/src/flax --timeout 900
    .venv/bin/python benchmarks/realcode/run.py --save out/ --json out/summary.json
    .venv/bin/python benchmarks/realcode/run.py --sample 100 --seed 0 # sites to classify by hand
    .venv/bin/python benchmarks/realcode/run.py --from out/ --sample 100 --seed 0   # no re-run
    .venv/bin/python benchmarks/realcode/run.py --from out/ --diagnostics error,warning

For each repository, one at a time (the CPU is shared, and the figures are CPU time of the child
processes, taken from `os.wait4`, so a busy machine slows the wall clock but not the ratio much):

1. the files shardls would check (`shardls.files.discover`, the same walk `check` makes);
2. `shardls check --output-format json --show-layouts .` run inside the repository, with the
   repository's own configuration (a user's first run), under a timeout;
3. `ruff check --no-cache --isolated --select ALL --exit-zero` on the same files: every rule, no
   repository configuration, no cache, so that ruff does its full work on every run. Its time is
   the yardstick the speed issue's targets are ratios to.

shardls runs with `--no-cache` (nothing is written into the repositories). With `--warm` it runs
twice instead, with a fresh cache in a temporary folder: the first run is the cold figure and
fills the cache, the second is the warm figure, and its JSON must be the first's byte for byte
(the table says whether it was).

Nothing of a repository is ever run or imported: both tools read its files as text.

Layout classes, from each entry of the JSON's `layouts` (see shardls/cli/output/json_format.py):

* **full**: every per-device dimension is a number (`shard_shape` all ints);
* **symbolic**: the rank is known (a `shard_shape` or `global_shape` list) but some size is not
  (a name, a formula such as `"n/4"`, or null), or the mesh is not known;
* **rejected**: shape, spec and mesh are known and shardls says JAX rejects the layout
  (`shard_shape` null): no per-device shape, and on real code that JAX runs, a false error;
* **unknown**: not even the rank.

"Resolved" in the table is full + symbolic.

Sites whose kind carries no array (`spec`, `named_sharding`) are counted apart as well, since a
bare `P(...)` has no shape of its own.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_ROOT = Path("/work/realcode")
DEFAULT_REPOSITORIES = ("maxtext", "flax", "tunix", "gemma", "EasyLM", "jax-llm-examples", "bonsai")
SHAPELESS_KINDS = frozenset({"spec", "named_sharding"})
CLASSES = ("full", "symbolic", "rejected", "unknown")
RUFF_ARGS = ("check", "--no-cache", "--isolated", "--select", "ALL", "--exit-zero", "--quiet")
VENV_BIN = Path(sys.executable).parent
CHECKOUT = Path(__file__).resolve().parents[2]
TIMINGS = "_summary.json"
"""Written beside the saved JSON of each repository: the table's rows, timings included."""


def use_commit(reference: str) -> str:
    """Extract the `shardls` package of a commit to a temporary folder and put it first on the path
    (of this process and of the children): the shared checkout may be mid-edit, a commit is not."""
    folder = Path(tempfile.mkdtemp(prefix="shardls-commit-"))
    commit = subprocess.run(
        ["git", "rev-parse", "--short", reference], cwd=CHECKOUT, check=True, capture_output=True, text=True
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "archive", commit, "shardls"], cwd=CHECKOUT, check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    compile_bytecode(folder / "shardls")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
    sys.path.insert(0, str(folder))
    return commit


def compile_bytecode(package: Path) -> None:
    """Compile the measured package's bytecode first, as pip does when it installs shardls: under
    PYTHONDONTWRITEBYTECODE=1 (or in a fresh --commit folder) every run would otherwise compile
    each module it imports, 0.1-0.15 s of CPU a run (and again in each worker for what it
    imports), which no installed shardls pays and ruff, a binary, has no counterpart of."""
    compileall.compile_dir(str(package), quiet=1)


def discover(paths: Sequence[Path]) -> list[Path]:
    """The files `shardls check` would read (imported late, so that --commit decides which shardls)."""
    from shardls.files import discover as shardls_discover

    return shardls_discover(paths)


@dataclass
class Timed:
    """One child process: its CPU time (user + sys, its own children included), wall time, end."""

    cpu: float
    wall: float
    returncode: int | None
    timed_out: bool
    stdout: bytes
    stderr: bytes


@dataclass
class RepositoryResult:
    name: str
    path: str
    files: int
    shardls_cpu: float | None = None
    shardls_wall: float | None = None
    shardls_returncode: int | None = None
    shardls_timed_out: bool = False
    shardls_failure: str | None = None
    ruff_cpu: float | None = None
    ruff_timed_out: bool = False
    warm_cpu: float | None = None
    """With --warm: the second run's CPU time, its cache filled by the first."""
    warm_identical: bool | None = None
    """With --warm: whether the second run printed exactly what the first did."""
    sites: int = 0
    layout_classes: dict[str, int] = field(default_factory=dict)
    array_layout_classes: dict[str, int] = field(default_factory=dict)
    site_kinds: dict[str, int] = field(default_factory=dict)
    diagnostics: dict[str, int] = field(default_factory=dict)
    """`CODE severity` -> count."""

    @property
    def ratio(self) -> float | None:
        if self.shardls_cpu is None or not self.ruff_cpu or self.shardls_timed_out or self.ruff_timed_out:
            return None
        return self.shardls_cpu / self.ruff_cpu

    @property
    def warm_ratio(self) -> float | None:
        if self.warm_cpu is None or not self.ruff_cpu or self.ruff_timed_out:
            return None
        return self.warm_cpu / self.ruff_cpu


def run_timed(command: Sequence[str], cwd: Path, timeout: float) -> Timed:
    """Run `command`, returning its CPU time from `os.wait4` (the child and what it waited for).

    Output goes to temporary files, not pipes, so a chatty child never blocks on a full pipe
    while we poll it. On timeout the child's whole process group is killed.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.monotonic()
        process = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=err, start_new_session=True)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout:
                timed_out = True
                os.killpg(process.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(process.pid, 0)
                break
            time.sleep(0.05)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        return Timed(
            cpu=usage.ru_utime + usage.ru_stime,
            wall=wall,
            returncode=None if timed_out else process.returncode,
            timed_out=timed_out,
            stdout=out.read(),
            stderr=err.read(),
        )


def layout_class(layout: dict[str, Any]) -> str:
    """full, symbolic, rejected or unknown (see the module docstring)."""
    shard = layout.get("shard_shape")
    if isinstance(shard, list):
        return "full" if all(isinstance(dim, int) for dim in shard) else "symbolic"
    if not isinstance(layout.get("global_shape"), list):
        return "unknown"
    return "rejected" if layout.get("spec") is not None and layout.get("mesh") else "symbolic"


def count(values: Iterable[str]) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))


def summarise(result: RepositoryResult, document: dict[str, Any]) -> None:
    layouts = document.get("layouts", [])
    result.sites = len(layouts)
    result.site_kinds = count(layout["kind"] for layout in layouts)
    result.layout_classes = count(layout_class(layout) for layout in layouts)
    result.array_layout_classes = count(
        layout_class(layout) for layout in layouts if layout["kind"] not in SHAPELESS_KINDS
    )
    result.diagnostics = count(f"{d['code']} {d['severity']}" for d in document["diagnostics"])


def shardls_command() -> list[str]:
    """`python -m shardls` with this interpreter, so that PYTHONPATH (and --commit) decide the code."""
    return [sys.executable, "-m", "shardls"]


def ruff_command() -> list[str]:
    installed = VENV_BIN / "ruff"
    return [str(installed) if installed.exists() else "ruff", *RUFF_ARGS]


def benchmark(path: Path, timeout: float, save: Path | None, warm: bool = False) -> RepositoryResult:
    files = discover([path])
    result = RepositoryResult(name=path.name, path=str(path), files=len(files))
    command = [*shardls_command(), "check", "--output-format", "json", "--show-layouts", "."]
    with tempfile.TemporaryDirectory(prefix="shardls-cache-") as cache:
        caching = ["--cache-dir", cache] if warm else ["--no-cache"]
        check = run_timed([*command, *caching], path, timeout)
        if warm and not check.timed_out:
            again = run_timed([*command, *caching], path, timeout)
            result.warm_cpu = None if again.timed_out else again.cpu
            result.warm_identical = again.stdout == check.stdout
    result.shardls_cpu, result.shardls_wall = check.cpu, check.wall
    result.shardls_returncode, result.shardls_timed_out = check.returncode, check.timed_out
    if check.timed_out:
        result.shardls_failure = f"timed out after {timeout:g} s"
    else:
        try:
            document = json.loads(check.stdout)
        except ValueError:
            tail = check.stderr.decode(errors="replace").strip().splitlines()[-3:]
            result.shardls_failure = f"exit {check.returncode}, no JSON: {' | '.join(tail)}"
        else:
            summarise(result, document)
            if save is not None:
                save.mkdir(parents=True, exist_ok=True)
                (save / f"{path.name}.json").write_bytes(check.stdout)
    relative = [str(f.relative_to(path)) for f in files]
    ruff = run_timed([*ruff_command(), *relative], path, timeout) if relative else None
    if ruff is not None:
        result.ruff_cpu, result.ruff_timed_out = ruff.cpu, ruff.timed_out
    return result


# -- printing ----------------------------------------------------------------------------------------


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _classes(classes: dict[str, int]) -> str:
    total = sum(classes.values())
    if not total:
        return " / ".join("0" for _ in CLASSES)
    parts = " / ".join(str(classes.get(name, 0)) for name in CLASSES)
    resolved = classes.get("full", 0) + classes.get("symbolic", 0)
    return f"{parts} ({100 * resolved / total:.0f}% resolved)"


def print_table(results: Sequence[RepositoryResult]) -> None:
    header = "| repository | files | shardls CPU s | ruff CPU s | ratio | sites | full / symbolic / rejected / unknown | array sites: the same | errors | warnings |"
    print(header)
    print("|---|---:|---:|---:|---:|---:|---|---|---:|---:|")
    for r in results:
        _print_row(r)
    if len(results) > 1:
        _print_total(results)
    if any(r.warm_cpu is not None for r in results):
        _print_warm(results)
    print()
    for r in results:
        if r.shardls_failure:
            print(f"{r.name}: shardls failed: {r.shardls_failure}")
        shown = ", ".join(f"{key} {n}" for key, n in r.diagnostics.items()) or "none"
        print(f"{r.name}: diagnostics: {shown}")
        print(f"{r.name}: site kinds: {', '.join(f'{k} {n}' for k, n in r.site_kinds.items()) or 'none'}")


def _print_row(r: RepositoryResult) -> None:
    errors = sum(n for key, n in r.diagnostics.items() if key.endswith(" error"))
    warnings = sum(n for key, n in r.diagnostics.items() if key.endswith(" warning"))
    ratio = "-" if r.ratio is None else f"{r.ratio:.1f}×"
    shardls = _seconds(r.shardls_cpu) + (" (TIMEOUT)" if r.shardls_timed_out else "")
    ruff = _seconds(r.ruff_cpu) + (" (TIMEOUT)" if r.ruff_timed_out else "")
    print(
        f"| {r.name} | {r.files} | {shardls} | {ruff} | {ratio} | {r.sites} "
        f"| {_classes(r.layout_classes)} | {_classes(r.array_layout_classes)} | {errors} | {warnings} |"
    )


def _print_total(results: Sequence[RepositoryResult]) -> None:
    """The row of all repositories together (the ratio of the summed CPU times)."""
    total = RepositoryResult(name="**all**", path="", files=sum(r.files for r in results))
    timed = all(r.shardls_cpu is not None and r.ruff_cpu is not None for r in results)
    if timed:
        total.shardls_cpu = sum(r.shardls_cpu or 0.0 for r in results)
        total.ruff_cpu = sum(r.ruff_cpu or 0.0 for r in results)
    total.shardls_timed_out = any(r.shardls_timed_out for r in results)
    total.ruff_timed_out = any(r.ruff_timed_out for r in results)
    total.sites = sum(r.sites for r in results)
    for field_name in ("layout_classes", "array_layout_classes", "diagnostics"):
        summed: Counter[str] = Counter()
        for r in results:
            summed.update(getattr(r, field_name))
        setattr(total, field_name, dict(summed))
    _print_row(total)


def _print_warm(results: Sequence[RepositoryResult]) -> None:
    """Cold against warm cache, each as a ratio to ruff's CPU time of the same run."""
    print()
    print(
        "| repository | files | cold CPU s | warm CPU s | ruff CPU s | cold ratio | warm ratio | warm output identical |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        cold = "-" if r.ratio is None else f"{r.ratio:.1f}×"
        warm = "-" if r.warm_ratio is None else f"{r.warm_ratio:.2f}×"
        same = {True: "yes", False: "**NO**", None: "-"}[r.warm_identical]
        print(
            f"| {r.name} | {r.files} | {_seconds(r.shardls_cpu)} | {_seconds(r.warm_cpu)} "
            f"| {_seconds(r.ruff_cpu)} | {cold} | {warm} | {same} |"
        )


def print_slowest(paths: Sequence[Path], top: int, timeout: float) -> None:
    """Each repository's slowest files, timed one by one in a child process (file_times.py),
    and the slowest of all (the speed issue's target: every file under 1 s)."""
    slowest: tuple[float, str] = (0.0, "-")
    for path in paths:
        with tempfile.TemporaryDirectory(prefix="shardls-times-") as folder:
            output = Path(folder) / "times.json"
            script = Path(__file__).with_name("file_times.py")
            timed = run_timed([sys.executable, str(script), str(path), "--json", str(output)], path, timeout)
            if timed.timed_out or not output.exists():
                print(
                    f"\n{path.name}: per-file timing failed ({'timeout' if timed.timed_out else timed.returncode})"
                )
                continue
            times = json.loads(output.read_text())
        files = sorted(times["files"].items(), key=lambda item: -item[1])
        print(
            f"\n{path.name}: workspace index {times['indexing']:.2f} s, files {sum(times['files'].values()):.2f} s"
        )
        for name, seconds in files[:top]:
            print(f"  {seconds:6.2f} s  {name}")
        if files:
            slowest = max(slowest, (files[0][1], f"{path.name}/{files[0][0]}"))
    print(f"\nslowest file: {slowest[1]} ({slowest[0]:.2f} s CPU)")


def _source_line(root: Path, entry: dict[str, Any]) -> str:
    """The line at a site or diagnostic; in a notebook, of its cell (1-based among all cells)."""
    path: str = entry["path"]
    line: int = entry["line"]
    try:
        text = (root / path).read_text(errors="replace")
        if entry.get("cell") is not None:
            source = json.loads(text)["cells"][entry["cell"] - 1]["source"]
            text = "".join(source) if isinstance(source, list) else str(source)
        return text.splitlines()[line - 1].strip()
    except (OSError, ValueError, LookupError, TypeError):
        return "?"


def _where(name: str, entry: dict[str, Any]) -> str:
    cell = "" if entry.get("cell") is None else f"[cell {entry['cell']}]"
    return f"{name}/{entry['path']}{cell}:{entry['line']}:{entry['column']}"


def sample_population(documents: dict[str, dict[str, Any]], arrays_only: bool) -> list[tuple[str, Any]]:
    """The sites `--sample` draws from, in the order its seed draws them: by repository name, then
    as the JSON lists them."""
    return [
        (name, layout)
        for name, document in sorted(documents.items())
        for layout in document.get("layouts", [])
        if not (arrays_only and layout["kind"] in SHAPELESS_KINDS)
    ]


def print_sample(
    documents: dict[str, tuple[Path, dict[str, Any]]], size: int, seed: int, arrays_only: bool
) -> None:
    roots = {name: root for name, (root, _) in documents.items()}
    population = sample_population({name: document for name, (_, document) in documents.items()}, arrays_only)
    picked = [
        (name, roots[name], layout)
        for name, layout in random.Random(seed).sample(population, min(size, len(population)))
    ]
    tally = Counter(layout_class(layout) for _, _, layout in picked)
    print(
        f"# {len(picked)} of {len(population)} sites, seed {seed}: "
        + ", ".join(f"{c} {tally[c]}" for c in CLASSES)
    )
    for index, (name, root, layout) in enumerate(picked, 1):
        print(
            f"\n{index}. {_where(name, layout)}  [{layout_class(layout)}] {layout['kind']} {layout['name']}"
        )
        print(f"   code:   {_source_line(root, layout)[:160]}")
        print(
            f"   global {layout['global_shape']} {layout['dtype']}  spec {layout['spec']}  mesh {layout['mesh']}"
            f"  -> per device {layout['shard_shape']}"
        )
        for assumption in layout.get("assumptions", []):
            print(f"   assumes: {assumption}")


def print_diagnostics(documents: dict[str, tuple[Path, dict[str, Any]]], severities: set[str]) -> None:
    for name, (root, document) in sorted(documents.items()):
        for d in document["diagnostics"]:
            if d["severity"] in severities:
                print(f"{_where(name, d)} {d['code']} {d['severity']}: {d['message']}")
                print(f"    {_source_line(root, d)[:200]}")


def _key(repository: str, entry: dict[str, Any]) -> tuple[str, str, int | None, int, str]:
    return (repository, entry["path"], entry.get("cell"), entry["line"], entry["code"])


def print_against_classification(documents: dict[str, tuple[Path, dict[str, Any]]], classified: Path) -> None:
    """Each class of the hand classification: how many of its diagnostics are still reported, and
    every error or warning that the classification does not know (new, or moved) to classify."""
    recorded = json.loads(classified.read_text())
    measured = {name for name in documents}
    expected: Counter[tuple[str, str, int | None, int, str]] = Counter()
    by_class: dict[str, list[tuple[str, str, int | None, int, str]]] = {}
    for row in recorded["diagnostics"]:
        if row["repo"] in measured:
            expected[_key(row["repo"], row)] += 1
            by_class.setdefault(row["class"], []).append(_key(row["repo"], row))
    seen: Counter[tuple[str, str, int | None, int, str]] = Counter(
        _key(name, d)
        for name, (_, document) in documents.items()
        for d in document["diagnostics"]
        if d["severity"] in ("error", "warning")
    )
    print("| class | verdict | classified | still reported | what |\n|---|---|---:|---:|---|")
    for name, keys in sorted(by_class.items()):
        still = sum(min(seen[k], expected[k]) for k in set(keys))
        verdict = "true" if name.startswith("T-") else "false"
        print(f"| {name} | {verdict} | {len(keys)} | {still} | {recorded['classes'][name]} |")
    unknown = seen - expected
    print(f"\nnot in the classification: {sum(unknown.values())}")
    for name, (root, document) in sorted(documents.items()):
        for d in document["diagnostics"]:
            key = _key(name, d)
            if unknown[key] > 0:
                unknown[key] -= 1
                print(f"{_where(name, d)} {d['code']} {d['severity']}: {d['message']}")
                print(f"    {_source_line(root, d)[:200]}")


# -- main ----------------------------------------------------------------------------------------------


def repositories(arguments: Sequence[str]) -> list[Path]:
    if arguments:
        return [Path(a).resolve() if Path(a).is_dir() else DEFAULT_ROOT / a for a in arguments]
    return [DEFAULT_ROOT / name for name in DEFAULT_REPOSITORIES if (DEFAULT_ROOT / name).is_dir()]


def _saved_timings(path: Path) -> dict[str, dict[str, Any]]:
    """The CPU figures of the run that saved the JSON (so `--from` prints them too)."""
    if not path.exists():
        return {}
    return {row["name"]: row for row in json.loads(path.read_text())}


def load_saved(folder: Path, paths: Sequence[Path]) -> dict[str, tuple[Path, dict[str, Any]]]:
    return {
        path.name: (path, json.loads((folder / f"{path.name}.json").read_text()))
        for path in paths
        if (folder / f"{path.name}.json").exists()
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "repositories",
        nargs="*",
        help=f"repository folders, or names under {DEFAULT_ROOT} (default: all of them)",
    )
    parser.add_argument(
        "--timeout", type=float, default=1800.0, help="seconds per tool and repository (1800)"
    )
    parser.add_argument("--save", type=Path, help="write each repository's shardls JSON to DIR/<name>.json")
    parser.add_argument("--json", type=Path, help="write the summary table as JSON to this file")
    parser.add_argument("--from", dest="saved", type=Path, help="read saved JSON from DIR instead of running")
    parser.add_argument(
        "--sample", type=int, metavar="N", help="print N random layout sites for hand classification"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of --sample (0)")
    parser.add_argument("--arrays-only", action="store_true", help="sample only sites that carry an array")
    parser.add_argument(
        "--diagnostics",
        metavar="SEVERITIES",
        help="list every diagnostic of these severities, e.g. error,warning",
    )
    parser.add_argument(
        "--classified",
        type=Path,
        metavar="FILE",
        help="compare with a hand classification (benchmarks/realcode/classified.json)",
    )
    parser.add_argument(
        "--commit", metavar="REF", help="measure this commit's shardls (default: the working tree)"
    )
    parser.add_argument(
        "--slowest",
        type=int,
        metavar="N",
        help="also time each file in one process (file_times.py) and print the N slowest per repository",
    )
    parser.add_argument(
        "--warm",
        action="store_true",
        help="run shardls twice with a fresh cache: cold, then warm (default: once, --no-cache)",
    )
    args = parser.parse_args(argv)
    if args.commit:
        print(f"shardls at commit {use_commit(args.commit)}\n")
    else:
        compile_bytecode(CHECKOUT / "shardls")
    paths = repositories(args.repositories)
    missing = [p for p in paths if not p.is_dir()]
    if missing or not paths:
        parser.error(f"no such repository folder: {', '.join(map(str, missing)) or DEFAULT_ROOT}")

    if args.saved is not None:
        documents = load_saved(args.saved, paths)
        timings = _saved_timings(args.saved / TIMINGS)
        results = []
        for name, (root, document) in documents.items():
            result = RepositoryResult(name=name, path=str(root), files=len(discover([root])))
            for key in ("shardls_cpu", "shardls_wall", "shardls_timed_out", "ruff_cpu", "ruff_timed_out"):
                if key in timings.get(name, {}):
                    setattr(result, key, timings[name][key])
            summarise(result, document)
            results.append(result)
        print_table(results)
    else:
        save = args.save or (
            Path(tempfile.mkdtemp(prefix="shardls-realcode-"))
            if args.sample or args.diagnostics or args.classified
            else None
        )
        results = []
        for path in paths:
            print(f"... {path.name}", file=sys.stderr, flush=True)
            results.append(benchmark(path, args.timeout, save, args.warm))
        print_table(results)
        if args.slowest:
            print_slowest(paths, args.slowest, args.timeout)
        rows = (
            json.dumps(
                [{**asdict(r), "ratio": r.ratio, "warm_ratio": r.warm_ratio} for r in results], indent=2
            )
            + "\n"
        )
        if args.json is not None:
            args.json.write_text(rows)
        if save is not None:
            save.mkdir(parents=True, exist_ok=True)
            (save / TIMINGS).write_text(rows)
        documents = load_saved(save, paths) if save is not None else {}
    if args.classified:
        print()
        print_against_classification(documents, args.classified)
    if args.diagnostics:
        print()
        print_diagnostics(documents, set(args.diagnostics.split(",")))
    if args.sample:
        print()
        print_sample(documents, args.sample, args.seed, args.arrays_only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
