"""`shardls check .` over workspaces of N one-line files: the time per file must not grow with N.

    .venv/bin/python benchmarks/bench_check_scale.py                 # 500, 2,000 and 8,000 files
    .venv/bin/python benchmarks/bench_check_scale.py --files 1000 50000

Each workspace is generated in a temporary folder (one `train.py` that builds a mesh, and N
files that build none, so that each looks for the workspace's only mesh) and checked by a
`shardls check .` subprocess, best of `--repeat`. The figure to read is the last column: the
time per file against the smallest workspace's, measured in the same run (1.0 is linear; before
the per-run workspace snapshot it grew with N: 1,000 files took 24 s).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TRAIN = "import jax\nmesh = jax.make_mesh((2, 4), ('data', 'model'))\n"


def workspace(folder: Path, files: int) -> None:
    (folder / "pyproject.toml").write_text("[project]\nname = 'bench'\n")
    (folder / "train.py").write_text(TRAIN)
    for index in range(files):
        (folder / f"m{index}.py").write_text(f"x{index} = {index}  # PartitionSpec\n")


def check_seconds(folder: Path, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-I", "-m", "shardls", "check", ".", "--output-format", "concise", "--no-cache"],
            cwd=folder,
            capture_output=True,
            check=False,
        )
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, nargs="+", default=[500, 2000, 8000])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    reference: float | None = None
    print(f"{'files':>8} {'seconds':>9} {'ms/file':>8} {'vs smallest':>12}")
    for files in sorted(args.files):
        with tempfile.TemporaryDirectory(prefix="shardls-scale-") as name:
            folder = Path(name)
            workspace(folder, files)
            seconds = check_seconds(folder, args.repeat)
        per_file = seconds / files
        reference = reference or per_file
        print(f"{files:>8,} {seconds:>9.2f} {per_file * 1000:>8.2f} {per_file / reference:>12.2f}")


if __name__ == "__main__":
    main()
