"""Re-analysis after an edit must equal a fresh analysis of the new text, whatever was cached."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from analysis_helpers import workspace

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from generate_models import model_source

MODEL = """import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
ROWS = 64


def place(cols):
    return jax.device_put(jnp.zeros((ROWS, cols)), NamedSharding(mesh, P("data", "model")))


a = place(16)
b = jax.device_put(jnp.zeros((ROWS, 8)), NamedSharding(mesh, P("model")))
"""


def _summary(analysis: FileAnalysis) -> tuple[object, ...]:
    return (
        tuple(
            (s.kind, s.span, s.name, s.shape, s.shard_shape, s.assumptions, s.provenance)
            for s in analysis.sites
        ),
        tuple((d.span, d.code, d.message) for d in analysis.diagnostics),
    )


def _same_as_fresh(analyzer: Analyzer, text: str) -> None:
    assert _summary(analyzer.analyze("/virtual/m.py", text)) == _summary(
        Analyzer().analyze("/virtual/m.py", text)
    )


def test_editing_a_constant_reanalyses_its_readers() -> None:
    analyzer = Analyzer()
    analyzer.analyze("/virtual/m.py", MODEL)
    edited = MODEL.replace("ROWS = 64", "ROWS = 63")
    result = analyzer.analyze("/virtual/m.py", edited)
    assert {d.code for d in result.diagnostics} == {"SH001"}
    _same_as_fresh(analyzer, edited)


def test_editing_a_caller_reanalyses_the_callee() -> None:
    analyzer = Analyzer()
    analyzer.analyze("/virtual/m.py", MODEL)
    edited = MODEL.replace("a = place(16)", "a = place(6)")
    result = analyzer.analyze("/virtual/m.py", edited)
    assert [s.shard_shape for s in result.sites if s.span.line == 9] == [None]
    _same_as_fresh(analyzer, edited)


def test_inserting_lines_shifts_everything_below() -> None:
    analyzer = Analyzer()
    analyzer.analyze("/virtual/m.py", MODEL)
    edited = MODEL.replace("ROWS = 64\n", "ROWS = 64\n\n\n# a comment\n")
    _same_as_fresh(analyzer, edited)


def test_random_edits_of_a_generated_model_match_fresh_analyses() -> None:
    text = model_source(600)
    lines = text.split("\n")
    rng = random.Random(7)
    analyzer = Analyzer()
    analyzer.analyze("/virtual/m.py", text)
    for _ in range(12):
        index = rng.randrange(len(lines))
        choice = rng.random()
        if choice < 0.4:
            lines[index] = lines[index].replace("128", "127").replace("d_model: int = 2", "d_model: int = 3")
        elif choice < 0.7:
            lines.insert(index, "")
        else:
            lines[index] = lines[index] + "  # edited"
        _same_as_fresh(analyzer, "\n".join(lines))


def test_editing_an_imported_file_reanalyses_its_importers(tmp_path: Path) -> None:
    analyzer = workspace(
        tmp_path,
        {
            "config.py": "WIDTH = 16\n",
            "model.py": (
                "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
                "from config import WIDTH\nmesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
                "x = jax.device_put(jnp.zeros((8, WIDTH)), NamedSharding(mesh, P(None, 'model')))\n"
            ),
        },
    )
    model = tmp_path / "model.py"
    first = analyzer.analyze(str(model), model.read_text())
    assert [s.shard_shape for s in first.sites if s.name == "x"] == [(8, 4)]
    analyzer.workspace.set_text(str(tmp_path / "config.py"), "WIDTH = 18\n")
    second = analyzer.analyze(str(model), model.read_text())
    assert [d.code for d in second.diagnostics] == ["SH001"]
    (tmp_path / "config.py").write_text("WIDTH = 32\n")
    analyzer.workspace.set_text(str(tmp_path / "config.py"), None)
    third = analyzer.analyze(str(model), model.read_text())
    assert [s.shard_shape for s in third.sites if s.name == "x"] == [(8, 8)]
