"""What `shardls check` imports on each path: a module imported is start-up CPU every run pays,
and on a warm cache or a small project start-up is most of the run (issue #14: a warm check
within ruff's CPU). Each check runs in a fresh interpreter, since this test process has imported
everything already."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from check_helpers import BAD, GOOD, write

HEAVY_FOR_A_WARM_RUN = (
    "shardls.analysis.analyzer",
    "shardls.analysis.module_info",
    "multiprocessing",
    "concurrent.futures",
    "tempfile",
    "traceback",
)
"""Nothing a check answered from the cache needs: the analysis, the parser's modules, the
worker pool, the cache's writing."""


def loaded_by_check(folder: Path, *argv: str) -> set[str]:
    """Which of HEAVY_FOR_A_WARM_RUN a `check` of `folder` with `argv` left in sys.modules."""
    program = (
        "import json, sys\nfrom shardls.cli.main import main\n"
        f"main(['check', '--quiet', *{list(argv)!r}])\n"
        f"print(json.dumps(sorted(set({list(HEAVY_FOR_A_WARM_RUN)!r}) & set(sys.modules))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", program],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_a_warm_check_imports_neither_the_analysis_nor_workers_nor_cache_writing(tmp_path: Path) -> None:
    write(tmp_path, {f"m{i:02}.py": BAD if i % 2 else GOOD for i in range(20)})
    cold = loaded_by_check(tmp_path, "--cache-dir", str(tmp_path / "cache"))
    assert {"shardls.analysis.analyzer", "shardls.analysis.module_info", "tempfile"} <= cold
    assert loaded_by_check(tmp_path, "--cache-dir", str(tmp_path / "cache")) == set()


def test_a_check_of_a_few_files_starts_no_worker_and_imports_no_pool(tmp_path: Path) -> None:
    write(tmp_path, {"good.py": GOOD, "bad.py": BAD})
    loaded = loaded_by_check(tmp_path, "--no-cache")
    assert "shardls.analysis.analyzer" in loaded
    assert not {"multiprocessing", "concurrent.futures", "tempfile"} & loaded
