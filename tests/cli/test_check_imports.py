"""What `shardls check` imports on each path: a module imported is start-up CPU every run pays,
and on a warm cache or a small project start-up is most of the run (issue #14: a warm check
within ruff's CPU). Each check runs in a fresh interpreter, since this test process has imported
everything already."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from check_helpers import BAD, GOOD, notebook, write

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


def printed_by(folder: Path, program: str) -> object:
    """The JSON `program` prints last, run in a fresh interpreter in `folder`."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", program],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def loaded_by_check(folder: Path, *argv: str, among: tuple[str, ...] = HEAVY_FOR_A_WARM_RUN) -> set[str]:
    """Which modules of `among` a `check` of `folder` with `argv` left in sys.modules."""
    program = (
        "import json, sys\nfrom shardls.cli.main import main\n"
        f"main(['check', '--quiet', *{list(argv)!r}])\n"
        f"print(json.dumps(sorted(set({list(among)!r}) & set(sys.modules))))\n"
    )
    loaded = printed_by(folder, program)
    assert isinstance(loaded, list)
    return set(loaded)


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


def test_the_toml_parser_is_imported_only_to_read_a_configuration(tmp_path: Path) -> None:
    """A pyproject.toml that does not mention shardls is not parsed (gemma's, bonsai's)."""
    parsers = ("tomllib", "tomli")
    write(tmp_path, {"good.py": GOOD, "pyproject.toml": "[project]\nname = 'x'\n"})
    assert loaded_by_check(tmp_path, "--no-cache", among=parsers) == set()
    write(tmp_path, {"pyproject.toml": "[tool.shardls]\ndevice-count = 8\n"})
    assert loaded_by_check(tmp_path, "--no-cache", among=parsers) != set()


def test_forked_workers_import_nothing_the_parent_could_have(tmp_path: Path) -> None:
    """What `_prepare_to_fork` imports, each worker inherits; what it leaves for the first
    analysis to import, each worker imports again (the library's models alone: 10 ms each).
    No file builds a mesh, so the workspace's index (which would import them too) parses none,
    as in gemma."""
    placing = "import jax\n\n\ndef put(x, sharding):\n    return jax.device_put(x * 2, sharding)\n"
    write(
        tmp_path,
        {"put.py": placing, "use.py": "from put import put\n", "nb.ipynb": notebook(("code", placing))},
    )
    program = (
        "import json, sys\nfrom shardls.cli import check_cmd, check_files\n"
        "from shardls.cli.main import build_parser\n"
        "jobs = check_cmd._jobs(build_parser().parse_args(['check', '--no-cache', '.']))\n"
        "check_files._prepare_to_fork(jobs)\nbefore = set(sys.modules)\n"
        "reports = [check_files.check_file(job) for job in jobs]\n"
        "assert len(reports) == 3 and not any(report.internal_error for report in reports), reports\n"
        "print(json.dumps(sorted(m for m in set(sys.modules) - before if m.startswith('shardls'))))\n"
    )
    assert printed_by(tmp_path, program) == []
