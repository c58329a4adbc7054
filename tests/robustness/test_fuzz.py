"""Fuzzing, CI-sized: mutated example and corpus files and generated programs through the
analyzer, `shardls check` and one long-lived language server. No input may raise, exceed the
analyzer's step budgets or hang (HANG). A longer run, which also times each input against a
2 s target: benchmarks/fuzz_long.py.

Inputs per CI run (each test asserts its count): analyzer ≈ 4,600 (every seed cut after and in
the middle of every line: ≈ 3,800; 8 mutants of each of the 74 seeds; 150 JAX-flavoured and 60
grammar-generated programs), `check` 283 (80 single files and a folder of 200 in-process, 3
subprocesses), server 300 texts with 2,100 requests (tests/robustness/fuzz_server.py): ≈ 5,200
in all.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from fuzz_inputs import PROGRAMS, mutations, python_programs, seed_files, truncations
from fuzz_server import REQUESTS_PER_INPUT, ServerFuzzer
from hypothesis import HealthCheck, given, settings
from robust_helpers import HANG, analyze_within, deadline

from shardls.analysis.analyzer import Analyzer
from shardls.cli.main import main

SEEDS = seed_files()
SEED_IDS = [str(path.relative_to(path.parents[1])) for path in SEEDS]


def _analyze(analyzer: Analyzer, text: str, path: str = "/virtual/fuzz/model.py") -> None:
    analyze_within(text, path, analyzer)


def test_there_are_seeds() -> None:
    assert len(SEEDS) >= 70


@pytest.mark.parametrize("seed", SEEDS, ids=SEED_IDS)
def test_truncations_and_mutations_through_the_analyzer(seed: Path) -> None:
    text = seed.read_text()
    analyzer = Analyzer()  # shared, as in the server: cached segments make truncations cheap
    count = 0
    for cut in truncations(text):
        _analyze(analyzer, cut)
        count += 1
    for mutant in mutations(text, random.Random(str(seed.name)), 8):
        _analyze(analyzer, mutant)  # after the truncations, as an edit in an editor
        _analyze(Analyzer(), mutant)  # and fresh
        count += 1
    assert count == 2 * (text.count("\n") + 1) + 8


FUZZ_SETTINGS = settings(
    max_examples=150,
    deadline=None,  # no timing on a busy machine: analyze_within bounds the work and hangs
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    database=None,
)


@FUZZ_SETTINGS
@given(PROGRAMS)
def test_jax_flavoured_programs_through_the_analyzer(program: str) -> None:
    _analyze(Analyzer(), program)


@pytest.mark.filterwarnings("ignore::SyntaxWarning")  # hypothesmith compiles what it generates
@settings(FUZZ_SETTINGS, max_examples=60)
@given(python_programs())
def test_grammar_generated_programs_through_the_analyzer(program: str) -> None:
    _analyze(Analyzer(), program)


def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    with deadline():
        code = main(["check", "--output-format", "json", "--show-layouts", *argv])
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    assert "internal error" not in captured.err, captured.err
    result = json.loads(captured.out)
    assert isinstance(result, dict)
    return result


def _mutants(count: int, salt: str) -> list[str]:
    rng = random.Random(salt)
    texts = [path.read_text() for path in SEEDS]
    return [next(mutations(rng.choice(texts), rng, 1)) for _ in range(count)]


def test_mutants_through_check_in_process(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    mutants = _mutants(280, "check")
    for number, text in enumerate(mutants[:80]):
        path = tmp_path / f"one_{number}.py"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        _check(capsys, path.name)
    folder = tmp_path / "many"
    folder.mkdir()
    for number, text in enumerate(mutants[80:]):
        # surrogatepass: a lone surrogate from a mutation becomes bytes that are not UTF-8 (SH210).
        (folder / f"m_{number}.py").write_bytes(text.encode("utf-8", errors="surrogatepass"))
    result = _check(capsys, "many")  # analysed in worker processes
    diagnostics = result["diagnostics"]
    assert isinstance(diagnostics, list)
    assert {d["path"] for d in diagnostics} <= {f"many/m_{n}.py" for n in range(200)}


def test_mutants_through_check_in_a_subprocess(tmp_path: Path) -> None:
    for number, text in enumerate(_mutants(3, "subprocess")):
        (tmp_path / f"m_{number}.py").write_bytes(text.encode("utf-8", errors="surrogatepass"))
    for number in range(3):
        completed = subprocess.run(
            [sys.executable, "-I", "-m", "shardls", "check", f"m_{number}.py", "--output-format", "json"],
            capture_output=True,
            text=True,
            timeout=HANG,
            cwd=tmp_path,
        )
        assert completed.returncode in (0, 1), completed.stderr
        assert completed.stderr == ""
        json.loads(completed.stdout)


def test_mutants_through_one_long_lived_server(tmp_path: Path) -> None:
    rng = random.Random("server")
    seeds = [path.read_text() for path in SEEDS]
    fuzzer = ServerFuzzer(tmp_path)
    for _ in range(300):
        fuzzer.feed(next(mutations(rng.choice(seeds), rng, 1)), rng)  # ServerFailure fails the test

    assert fuzzer.close() == []
    assert fuzzer.inputs == 300 and fuzzer.requests == 300 * REQUESTS_PER_INPUT
    assert fuzzer.restarts == 0


@pytest.mark.slow
def test_the_long_run() -> None:
    """benchmarks/fuzz_long.py's 20,000 inputs, through the analyzer or `check` and the server
    (about 5-7 minutes): `pytest -m slow`."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import fuzz_long

    assert fuzz_long.run(20_000, seed=1) == 0
