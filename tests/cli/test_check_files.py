"""Which files `shardls check` reads, and how it reads notebooks and files it cannot read."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from check_helpers import BAD, GOOD, HEADER, check, check_json, column_of, notebook, put, write

from shardls.analysis.analyzer import Analyzer
from shardls.cli import check_files, workers
from shardls.files import discover
from shardls.globs import PatternSet
from shardls.notebook import read_notebook


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _found(root: Path, *paths: str, exclude: tuple[PatternSet, ...] = ()) -> list[str]:
    return [p.relative_to(root).as_posix() for p in discover([root / p for p in paths or ("",)], exclude)]


# -- gitignore-style patterns ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("patterns", "path", "is_dir", "verdict"),
    [
        (["*.py"], "a/b/c.py", False, True),
        (["build/"], "src/build", True, True),
        (["build/"], "src/build", False, None),
        (["/build"], "src/build", True, None),
        (["/build"], "build", True, True),
        (["src/gen"], "src/gen", True, True),
        (["src/gen"], "x/src/gen", True, None),
        (["**/gen"], "x/y/gen", True, True),
        (["src/**"], "src/a/b.py", False, True),
        (["a/**/b.py"], "a/b.py", False, True),
        (["a/**/b.py"], "a/x/y/b.py", False, True),
        (["*.py", "!keep.py"], "keep.py", False, False),
        (["*.py", "!keep.py", "keep*"], "keep.py", False, True),
        (["data_[0-9].py"], "data_7.py", False, True),
        (["data_[!0-9].py"], "data_7.py", False, None),
        (["?.py"], "ab.py", False, None),
        (["# comment", "", r"\#hash.py"], "#hash.py", False, True),
        ([r"\!bang.py"], "!bang.py", False, True),
    ],
)
def test_patterns(tmp_path: Path, patterns: list[str], path: str, is_dir: bool, verdict: bool | None) -> None:
    assert PatternSet.parse(tmp_path, patterns).match(tmp_path / path, is_dir) is verdict


def test_patterns_ignore_paths_outside_their_base(tmp_path: Path) -> None:
    assert PatternSet.parse(tmp_path / "sub", ["*.py"]).match(tmp_path / "a.py", False) is None


# -- discovery ---------------------------------------------------------------------------------


def test_walk_skips_environments_and_non_python_files(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "a.py": "",
            "nb.ipynb": notebook(),
            "notes.txt": "",
            "pkg/b.py": "",
            ".venv/lib/c.py": "",
            "node_modules/d.py": "",
            "pkg/__pycache__/e.py": "",
            ".git/f.py": "",
        },
    )
    assert _found(tmp_path) == ["a.py", "nb.ipynb", "pkg/b.py"]


def test_gitignore(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".git/HEAD": "",
            ".gitignore": "generated/\n*_pb2.py\n!keep_pb2.py\n/top.py\n",
            "generated/a.py": "",
            "x_pb2.py": "",
            "keep_pb2.py": "",
            "top.py": "",
            "sub/top.py": "",
            "sub/.gitignore": "local.py\n",
            "sub/local.py": "",
            "local.py": "",
        },
    )
    assert _found(tmp_path) == ["keep_pb2.py", "local.py", "sub/top.py"]
    # Walking a subfolder still honours the .gitignore files above it, up to the repository root.
    assert _found(tmp_path, "sub") == ["sub/top.py"]


def test_explicit_files_are_always_checked(tmp_path: Path) -> None:
    write(tmp_path, {".gitignore": "*.py\n", "a.py": ""})
    assert _found(tmp_path) == []
    assert _found(tmp_path, "a.py") == ["a.py"]


def test_exclude_from_config_and_flag(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.shardls]\nexclude = ["experiments/"]\n',
            "experiments/bad.py": BAD,
            "scratch/bad.py": BAD,
            "src/bad.py": BAD,
        },
    )
    code, out = check_json(capsys, "--exclude", "scratch")
    assert code == 1
    assert [d["path"] for d in out["diagnostics"]] == ["src/bad.py"]
    code, out = check_json(capsys, "--exclude", "scratch,src")
    assert (code, out["diagnostics"]) == (0, [])


def test_a_file_named_twice_is_checked_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(tmp_path, {"bad.py": BAD})
    code, out = check_json(capsys, "bad.py", ".", "./bad.py")
    assert len(out["diagnostics"]) == 1


def test_no_files_is_a_warning(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    result = check(capsys)
    assert result.code == 0
    assert "no Python files or notebooks found" in result.err


# -- notebooks ---------------------------------------------------------------------------------


def test_notebook_cells_are_one_program_with_cell_positions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad_line = put("y", "(9, 16)", "'data'")
    write(
        tmp_path,
        {
            "nb.ipynb": notebook(
                ("markdown", "# The mesh\n"),
                ("code", "%matplotlib inline\n" + HEADER),
                ("markdown", "Now an array"),
                ("code", "!nvidia-smi\n%time 1\n" + bad_line),
            )
        },
    )
    result = check(capsys, "--output-format", "concise", "--show-layouts")
    column = bad_line.index("'data'") + 1
    assert result.out.splitlines()[:2] == [
        "nb.ipynb:cell 4:3:5: device_put y: float32[9@data,16] → rejected by JAX (SH001)",
        f"nb.ipynb:cell 4:3:{column}: SH001 dimension 0 of [9, 16] has size 9, which mesh axis 'data' of "
        "size 2 (2 ways) does not divide; the nearest sizes that divide are 8 and 10",
    ]
    assert "SH209" not in result.out  # the IPython lines are not syntax errors
    full = check(capsys)
    assert f"3 | {bad_line.rstrip()}" in full.out
    assert "= note: mesh defined here (nb.ipynb:cell 2:6:8)" in full.out
    code, out = check_json(capsys)
    assert (out["diagnostics"][0]["cell"], out["diagnostics"][0]["line"]) == (4, 3)


def test_notebook_line_mapping() -> None:
    book = read_notebook(notebook(("code", "a = 1\nb = 2\n"), ("markdown", "x"), ("code", "c = 3")))
    assert book.text == "a = 1\nb = 2\nc = 3"
    assert [book.locate(line) for line in range(3)] == [(1, 0), (1, 1), (3, 0)]
    assert (book.line_of(3, 0), book.line_of(1, 1), book.line_of(1, 2), book.line_of(2, 0)) == (
        2,
        1,
        None,
        None,
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "the notebook is not valid JSON"),
        ('{"nbformat": 3, "worksheets": []}', "the notebook has no list of cells"),
        ('{"cells": [{"cell_type": "code", "source": 3}]}', "cell 1 has a source that is neither text"),
    ],
)
def test_broken_notebook_is_sh210(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, message: str
) -> None:
    write(tmp_path, {"broken.ipynb": content, "good.py": GOOD})
    result = check(capsys, "--output-format", "concise")
    assert result.out.splitlines()[0].startswith(f"broken.ipynb:1:1: SH210 {message}")
    assert result.code == 1


# -- files that cannot be read -----------------------------------------------------------------


def test_non_utf8_file_is_sh210(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(tmp_path, {"latin1.py": "s = 'café'\n".encode("latin-1"), "bad.py": BAD})
    result = check(capsys, "--output-format", "concise")
    lines = result.out.splitlines()
    assert (
        lines[1]
        == "latin1.py:1:1: SH210 cannot read the file as UTF-8 text: invalid continuation byte at byte 8"
    )
    assert lines[0].startswith("bad.py:6:")  # the other file is still checked
    assert result.code == 1
    full = check(capsys, "latin1.py")
    assert full.out.startswith("latin1.py:1:1: SH210 ")
    assert check(capsys, "--ignore", "SH210", "latin1.py").code == 0


def test_utf8_bom_and_wide_characters(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = BAD.replace("y = ", "größe = ")
    write(tmp_path, {"bom.py": b"\xef\xbb\xbf" + source.encode()})
    code, out = check_json(capsys)
    assert out["diagnostics"][0]["column"] == column_of(source, "'data'")


def test_an_analyzer_crash_costs_one_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, {"a_crash.py": GOOD, "bad.py": BAD})
    analyze = Analyzer.analyze

    def crash_on_a(self: Analyzer, path: str, text: str, settings: object = None) -> object:
        if path.endswith("a_crash.py"):
            raise RuntimeError("boom")
        return analyze(self, path, text, settings)  # type: ignore[arg-type]

    monkeypatch.setattr(Analyzer, "analyze", crash_on_a)
    result = check(capsys, "--output-format", "concise")
    assert result.err == (
        "shardls check: internal error while analysing a_crash.py (please report it): RuntimeError: boom\n"
    )
    assert result.out.startswith("bad.py:6:")
    assert result.code == 2  # shardls failed: never 1, which CI reads as findings


# -- parallel ----------------------------------------------------------------------------------


def test_parallel_and_serial_agree(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        tmp_path,
        {f"m{i:02}.py": BAD if i % 3 == 0 else GOOD for i in range(check_files.PARALLEL_MIN_FILES + 4)},
    )
    write(tmp_path, {"broken.ipynb": "{", "latin1.py": b"\xff"})
    pools: list[object] = []

    class RecordingPool(ProcessPoolExecutor):
        def __init__(self, max_workers: int, **options: Any) -> None:
            pools.append(self)
            super().__init__(max_workers=max_workers, **options)

    monkeypatch.setattr(workers, "ProcessPoolExecutor", RecordingPool)
    monkeypatch.setattr(check_files, "PARALLEL_MIN_BYTES", 1)
    parallel = check(capsys, "--output-format", "json", "--show-layouts")
    assert len(pools) == (1 if (os.cpu_count() or 1) > 1 else 0)
    monkeypatch.setattr(check_files, "PARALLEL_MIN_FILES", 10**6)
    serial = check(capsys, "--output-format", "json", "--show-layouts")
    assert parallel == serial
    assert parallel.code == 1
    assert parallel.out.count('"SH001"') == 7
