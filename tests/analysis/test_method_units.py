"""An edit inside one method's body analyses that method again and the statements of its class
that read it, not the whole class (`analysis/method_units.py`). The statements analysed are
counted by the walker's entry point for one statement of a class (`Walker.member_visits`), and
every analysis is compared with a fresh one."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from edit_sequences import CLASSY

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.mesh_pass import _mesh_calls_pattern
from shardls.analysis.source import Segment
from shardls.analysis.walker import Visit, Walker
from shardls.analysis.workspace import Workspace


@pytest.fixture
def walked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The class statements walked, as `Class.name` (a method's name, or the statement's kind)."""
    names: list[str] = []
    original = Walker.member_visits

    def member_visits(self: Walker, segment: Segment, member: ast.stmt) -> Iterator[Visit]:
        cls = segment.body[0]
        assert isinstance(cls, ast.ClassDef)
        names.append(f"{cls.name}.{getattr(member, 'name', type(member).__name__)}")
        return original(self, segment, member)

    monkeypatch.setattr(Walker, "member_visits", member_visits)
    return names


def _edit(tmp_path: Path, walked: list[str], old: str, new: str, source: str = CLASSY) -> list[str]:
    """The class statements an edit of `source` from `old` to `new` analyses again; the analysis
    must equal a fresh one."""
    assert source.count(old) == 1
    path = str(tmp_path / "model.py")
    analyzer = Analyzer(Workspace([tmp_path]))
    analyzer.analyze(path, source)
    walked.clear()
    edited = source.replace(old, new)
    incremental = analyzer.analyze(path, edited)
    again = list(walked)
    assert incremental == Analyzer(Workspace([tmp_path])).analyze(path, edited)
    return again


def test_a_method_nothing_reads_is_analysed_alone(tmp_path: Path, walked: list[str]) -> None:
    assert _edit(tmp_path, walked, "jnp.ones((12, 8))", "jnp.ones((13, 8))") == ["Block.local_only"]


def test_the_methods_that_read_the_edited_one_are_analysed_again(tmp_path: Path, walked: list[str]) -> None:
    """`counted` looks `Block.count` up (and places an array of the length it returns)."""
    again = _edit(tmp_path, walked, "return 6", "return 8")
    assert again == ["Block.count", "Block.counted"]


def test_a_method_read_through_a_class_level_name_is_a_read_of_the_method(
    tmp_path: Path, walked: list[str]
) -> None:
    """`Rows.alias` is a class-level name bound to `forward`: looking it up may reach any method."""
    source = CLASSY.replace(
        "\n\nclass Wide(Block):",
        """


class Rows:
    @staticmethod
    def forward():
        return 6

    alias = forward

    def placed(self):
        return jax.device_put(jnp.zeros((Rows.alias(), 8)), NamedSharding(mesh, P("model")))


class Wide(Block):""",
    )
    again = _edit(tmp_path, walked, "return 6\n\n    alias", "return 8\n\n    alias", source)
    assert "Rows.placed" in again and "Block.count" not in again


def test_a_method_whose_value_no_analysis_asked_is_analysed_alone(tmp_path: Path, walked: list[str]) -> None:
    """`make` calls `self.shape()`, but on a `self` no visible call makes (an unknown value):
    its analysis never looked `shape` up, so it holds whatever `shape` returns."""
    assert _edit(tmp_path, walked, "return (self.rows, self.width)", "return (self.rows, 3)") == [
        "Block.shape"
    ]


def test_a_search_of_callers_through_the_edited_method_is_made_again(
    tmp_path: Path, walked: list[str]
) -> None:
    """`helper` calls `place`: the class's statements that searched `place`'s callers (none in
    the class; the function's own segment is not a class) are analysed again, as the segment
    `place` is in (its contexts name `helper`'s call)."""
    again = _edit(tmp_path, walked, "return place(n, self.width)", "return place(n + 1, self.width)")
    assert again[0] == "Block.helper" and "Block.local_only" not in again


def test_an_edit_of_the_constructor_analyses_the_whole_class(tmp_path: Path, walked: list[str]) -> None:
    again = _edit(tmp_path, walked, "self.rows = rows", "self.rows = 2 * rows")
    assert [name for name in again if name.startswith("Block.")] == [
        f"Block.{name}"
        for name in (
            "__init__",
            "sharding",
            "shape",
            "make",
            "helper",
            "uses_helper",
            "count",
            "counted",
            "local_only",
            "__call__",
        )
    ]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("w = jnp.ones((12, 8))", "w = jnp.ones((12, 8))\n        v = w"),  # a statement added
        ("w = jnp.ones((12, 8))", "w = jnp.ones(\n            (12, 8)\n        )"),  # Enter
        ("        w = jnp.ones((12, 8))\n", ""),  # a line deleted
    ],
)
def test_an_edit_that_moves_the_lines_below_analyses_the_method_alone(
    tmp_path: Path, walked: list[str], old: str, new: str
) -> None:
    """The results of the statements below it move with their lines (`line_shift`)."""
    assert _edit(tmp_path, walked, old, new) == ["Block.local_only"]


def test_a_blank_line_between_methods_analyses_the_whole_class(tmp_path: Path, walked: list[str]) -> None:
    again = _edit(tmp_path, walked, "\n    def local_only", "\n\n    def local_only")
    assert "Block.local_only" in again and "Block.__init__" in again


TRAINER = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


class Trainer:
    def mesh(self):
        return jax.make_mesh((2, 4), ("data", "model"))

    def place(self, x):
        return jax.device_put(x, NamedSharding(self.mesh(), P("data")))

    def other(self):
        return jax.device_put(jnp.zeros((16, 8)), NamedSharding(jax.make_mesh((8,), ("x",)), P("x")))


trainer = Trainer()
"""


@pytest.mark.parametrize(
    ("old", "new", "mesh_walks"),
    [
        ("(16, 8)", "(17, 8)", ["other"]),  # the meshes are the same: one statement walked
        ("(2, 4)", "(4, 2)", ["mesh"]),  # the mesh it builds changed: `place` only calls `mesh`
    ],
)
def test_the_mesh_pass_walks_the_edited_method(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str, mesh_walks: list[str]
) -> None:
    """The mesh pass keeps each statement's walk of a class that builds meshes like the analysis
    keeps its results (`mesh_pass.walk_members`)."""
    walks: list[str] = []
    original = Walker.member_visits
    mesh_calls = _mesh_calls_pattern()

    def member_visits(self: Walker, segment: Segment, member: ast.stmt) -> Iterator[Visit]:
        if self.calls is mesh_calls:
            walks.append(getattr(member, "name", ""))
        return original(self, segment, member)

    monkeypatch.setattr(Walker, "member_visits", member_visits)
    path = str(tmp_path / "trainer.py")
    analyzer = Analyzer(Workspace([tmp_path]))
    analyzer.analyze(path, TRAINER)
    walks.clear()
    edited = TRAINER.replace(old, new)
    incremental = analyzer.analyze(path, edited)
    assert walks == mesh_walks
    assert incremental == Analyzer(Workspace([tmp_path])).analyze(path, edited)
