"""What `Analyzer.analyze` reports as it goes (`progress`) is never wrong, only incomplete: every
diagnostic of every partial analysis is one of the final analysis', and the last statement's
partial analysis holds all of them but those only the end decides."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from generate_models import model_source

UNUSED_SUPPRESSION = """\
import jax
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jax.numpy.zeros((8, 16)), NamedSharding(mesh, P("data")))  # noqa: SH001
y = jax.device_put(jax.numpy.zeros((9, 16)), NamedSharding(mesh, P("data")))
"""


def _partials(text: str) -> tuple[list[FileAnalysis], FileAnalysis]:
    partials: list[FileAnalysis] = []

    def progress(so_far: Callable[[], FileAnalysis]) -> None:
        partials.append(so_far())

    final = Analyzer().analyze("/virtual/m.py", text, progress=progress)
    return partials, final


def test_partial_analyses_grow_towards_the_final_one() -> None:
    partials, final = _partials(model_source(400))
    assert len(partials) > 10
    counts = [len(p.diagnostics) for p in partials]
    assert counts == sorted(counts) and counts[-1] == len(final.diagnostics) > 0
    for partial in partials:
        assert all(d in final.diagnostics for d in partial.diagnostics)
        assert partial.sites == ()


def test_a_suppression_that_silences_nothing_is_reported_only_at_the_end() -> None:
    partials, final = _partials(UNUSED_SUPPRESSION)
    assert sorted(d.code for d in final.diagnostics) == ["SH001", "SH401"]
    assert [d.code for d in partials[-1].diagnostics] == ["SH001"]
