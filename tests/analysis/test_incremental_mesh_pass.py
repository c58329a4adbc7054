"""The mesh pass walks again only the segments an edit changed and their readers (`mesh_pass`),
and what it replays of the others leaves the analysis as a fresh one's: counted by the walks of
`walk_segment`, not by time."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shardls.analysis import mesh_pass
from shardls.analysis.analyzer import Analyzer
from shardls.analysis.evaluator import Evaluator
from shardls.analysis.facts import FileAnalysis, Span
from shardls.analysis.file_settings import file_device_count, file_environment
from shardls.analysis.library import Library
from shardls.analysis.pragmas import Pragmas
from shardls.analysis.settings import Settings
from shardls.analysis.site_record import SharedState
from shardls.analysis.sites import SiteBuilder
from shardls.analysis.values import MeshV
from shardls.analysis.workspace import Workspace
from shardls.core.mesh import Mesh

PATH = "/virtual/meshes.py"

MODEL = """import jax
from jax.sharding import NamedSharding, PartitionSpec as P

DATA = 2


def build_mesh(model):
    return jax.make_mesh((DATA, model), ("data", "model"))


first = build_mesh(4)
second = build_mesh(4)
other = jax.make_mesh((8,), ("x",))
wrong = jax.make_mesh((3,), ("y",))


def place(x):
    return jax.device_put(x, NamedSharding(first, P("data")))
"""


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The start lines of the segments the mesh pass walks (cleared by the test as it goes)."""
    walked: list[int] = []
    original = mesh_pass.walk_segment

    def counting(walker, builder, segment, workspace):  # type: ignore[no-untyped-def]
        walked.append(segment.first_line)
        return original(walker, builder, segment, workspace)

    monkeypatch.setattr(mesh_pass, "walk_segment", counting)
    yield walked


def _outcome(analysis: FileAnalysis) -> tuple[object, ...]:
    return analysis.meshes, analysis.diagnostics, analysis.sites


def _edit(analyzer: Analyzer, walked: list[int], text: str) -> list[int]:
    """The segments walked by the analysis of `text` after the previous one, which must give what
    a fresh analysis gives."""
    walked.clear()
    incremental = analyzer.analyze(PATH, text)
    again = list(walked)
    assert _outcome(incremental) == _outcome(Analyzer().analyze(PATH, text))
    return again


def test_an_edit_elsewhere_walks_no_segment_again(walks: list[int]) -> None:
    analyzer = Analyzer()
    analyzer.analyze(PATH, MODEL)
    # `first = build_mesh(4)` names no mesh: the walk of `build_mesh` finds its callers.
    assert walks == [6, 12, 13]
    assert _edit(analyzer, walks, MODEL.replace('P("data")', 'P("model")')) == []
    assert _edit(analyzer, walks, MODEL + "# a comment\n") == []
    assert _edit(analyzer, walks, MODEL.replace('("y",))', '("y",))  # a comment')) == []


def test_an_edit_walks_the_changed_segment_and_its_readers(walks: list[int]) -> None:
    analyzer = Analyzer()
    analyzer.analyze(PATH, MODEL)
    edited = MODEL.replace("other = jax.make_mesh((8,)", "other = jax.make_mesh((4,)")
    assert _edit(analyzer, walks, edited) == [12]
    # `DATA` and the calls of `build_mesh` are read by the walk of `build_mesh` alone.
    assert _edit(analyzer, walks, edited.replace("DATA = 2", "DATA = 1")) == [6]
    assert _edit(analyzer, walks, edited.replace("second = build_mesh(4)", "second = build_mesh(3)")) == [6]


def test_problems_follow_the_mesh_as_edits_make_and_mend_them(walks: list[int]) -> None:
    """A mesh made wrong by an edit elsewhere is reported, and no longer once mended, as a fresh
    analysis does; the other segments' kept outcomes (and their reports) stay."""
    analyzer = Analyzer()
    analyzer.analyze(PATH, MODEL)
    broken = MODEL.replace("first = build_mesh(4)", "first = build_mesh(3)")
    assert _edit(analyzer, walks, broken) == [6]
    reported = analyzer.analyze(PATH, broken).diagnostics
    assert sorted({d.span.line for d in reported if d.code.startswith("SH1")}) == [7, 13]
    assert _edit(analyzer, walks, MODEL) == [6]
    reported = analyzer.analyze(PATH, MODEL).diagnostics
    assert sorted({d.span.line for d in reported if d.code.startswith("SH1")}) == [13]


def _builder() -> SiteBuilder:
    device_count = file_device_count(Pragmas(), Settings())
    library = Library(file_environment(device_count, Settings()))
    return SiteBuilder(Evaluator(Workspace(), library), library, PATH, 8, None, False, None, [])


def test_a_kept_outcome_stands_only_while_the_shared_state_answers_alike() -> None:
    """What a segment's walk asked of the builder's state shared with the other segments (is
    this mesh made, this problem reported?) decides whether its kept outcome may be replayed:
    taken into a builder that answers alike, it leaves that builder as the walk left its own."""
    wrong = MeshV(Mesh(("x",), (16,)), Span(13, 7, 13, 33), PATH)  # 16 devices of 8
    walked = _builder()
    walked.record.shared = SharedState()
    walked.mesh_fact(wrong, "wrong")
    shared = walked.record.shared
    assert shared.meshes_added and shared.seen_added and walked.diagnostics

    fresh = _builder()
    assert fresh.record.answers_alike(shared)
    fresh.record.take(shared)
    assert fresh.record.meshes == walked.record.meshes
    # Made and reported already: a walk would now find the mesh and report nothing again.
    assert not fresh.record.answers_alike(shared)
    fresh.mesh_fact(wrong, "wrong")
    assert fresh.diagnostics == []
