"""SH210: an error only when Python could not read the file either.

A file shardls declines (over its size bound, a named pipe) may hold fine code, so that is a
warning and CI passes; bytes invalid in the file's encoding are an error, as they are for Python.
A notebook's outputs (images) do not count toward the bound: its code cells are what is analysed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from check_helpers import BAD, check

from shardls.files import MAX_READ_BYTES


def _notebook(code: str, output_bytes: int) -> str:
    image = "A" * output_bytes
    cell = {
        "cell_type": "code",
        "source": code,
        "metadata": {},
        "execution_count": 1,
        "outputs": [{"output_type": "display_data", "data": {"image/png": image}, "metadata": {}}],
    }
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_a_notebook_large_because_of_its_outputs_is_analysed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "big.ipynb").write_text(_notebook(BAD, MAX_READ_BYTES + 1_000_000))
    monkeypatch.chdir(tmp_path)
    result = check(capsys, "big.ipynb", "--output-format", "concise")
    assert result.code == 1
    assert "SH001" in result.out and "SH210" not in result.out


def test_a_file_shardls_declines_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    os.mkfifo(tmp_path / "pipe.py")
    monkeypatch.chdir(tmp_path)
    result = check(capsys, "pipe.py", "--output-format", "json")
    (diagnostic,) = json.loads(result.out)["diagnostics"]
    assert (diagnostic["code"], diagnostic["severity"]) == ("SH210", "warning")
    assert result.code == 0


def test_bytes_invalid_in_the_encoding_are_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bad.py").write_bytes(b"x = '\xff'\n")
    monkeypatch.chdir(tmp_path)
    result = check(capsys, "bad.py", "--output-format", "json")
    (diagnostic,) = json.loads(result.out)["diagnostics"]
    assert (diagnostic["code"], diagnostic["severity"]) == ("SH210", "error")
    assert result.code == 1
