"""Hundreds of seeded edit sequences replayed on one long-lived Analyzer (as the language server
keeps it): after every edit, its analysis must equal a fresh Analyzer's of the same text in every
field (sites, typed names, meshes, diagnostics, suppressed ones, parse errors, device count), so
that what the server shows (diagnostics, hovers, inlay hints: all rendered from the analysis)
never depends on what it reused. Besides the edits of `sequence`, sequences of edits that move
lines, undone, redone and reverted by changes sent as the whole text (`moving_sequence`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from edit_sequences import Edit, FileEdit, Fixture, Whole, fixtures, moving_sequence, sequence

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import FileAnalysis
from shardls.analysis.settings import Settings
from shardls.analysis.workspace import Workspace
from shardls.memory.diagnostics import memory_diagnostics

SEQUENCES = 240
STEPS = 8
GROUPS = 12
"""Sequences run in groups (one test each), so that a parallel run spreads them."""
MOVING_SEQUENCES = 60
MOVING_STEPS = 10
MOVING_GROUPS = 4

_FIXTURES = fixtures()


def _analyzer(root: Path) -> Analyzer:
    return Analyzer(Workspace([root]), producers=(memory_diagnostics,))


def _differences(incremental: FileAnalysis, fresh: FileAnalysis) -> list[str]:
    """The fields that differ, for the failure message."""
    return [
        name
        for name in ("sites", "names", "meshes", "diagnostics", "suppressed", "parse_errors", "device_count")
        if getattr(incremental, name) != getattr(fresh, name)
    ]


def _replay(
    tmp_path: Path, fixture: Fixture, seed: int, edits: list[Edit | FileEdit] | list[Edit | Whole]
) -> None:
    root = tmp_path / f"{fixture.name}-{seed}"
    root.mkdir()
    for name, text in fixture.files:
        (root / name).write_text(text)
    path = str(root / "model.py")
    settings = Settings()
    kept = _analyzer(root)
    text = fixture.text
    kept.analyze(path, text, settings)
    others = dict(fixture.files)
    for number, edit in enumerate(edits):
        if isinstance(edit, FileEdit):
            others[edit.name] = edit.text
            kept.workspace.set_text(str(root / edit.name), edit.text)
        else:
            assert isinstance(edit, (Edit, Whole))
            text = edit.apply(text)
        for name, other in others.items():
            (root / name).write_text(other)
        incremental = kept.analyze(path, text, settings)
        fresh = _analyzer(root).analyze(path, text, settings)
        assert incremental == fresh, (
            f"{fixture.name} seed {seed}, edit {number} ({edit}): {_differences(incremental, fresh)}"
        )


@pytest.mark.parametrize("group", range(GROUPS))
def test_every_edit_of_a_sequence_gives_the_fresh_analysis(tmp_path: Path, group: int) -> None:
    for seed in range(group, SEQUENCES, GROUPS):
        fixture = _FIXTURES[seed % len(_FIXTURES)]
        _replay(tmp_path, fixture, seed, sequence(fixture, seed, STEPS))


@pytest.mark.parametrize("group", range(MOVING_GROUPS))
def test_every_whole_text_undo_of_a_moving_edit_gives_the_fresh_analysis(tmp_path: Path, group: int) -> None:
    for seed in range(group, MOVING_SEQUENCES, MOVING_GROUPS):
        fixture = _FIXTURES[seed % len(_FIXTURES)]
        _replay(tmp_path, fixture, seed, moving_sequence(fixture, seed, MOVING_STEPS))
