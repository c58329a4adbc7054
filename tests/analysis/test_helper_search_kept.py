"""The helper search's answers about an imported module are kept for a snapshot of the disk
(`analysis/workspace_answers.py`): the second file importing a helper module does not resolve
that module's own imports again, finds the same helpers, and notes the same reads of the
workspace as if it had searched itself, so that a persistent cache entry rests on the same facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.walking.helper_imports import helper_names
from shardls.analysis.workspace import Workspace, WorkspaceReads

IMPL = """\
import jax


def put(x, sharding):
    return jax.device_put(x, sharding)
"""

UTILS = """\
from impl import put


def put_rows(x, sharding):
    return put(x, sharding)
"""

IMPORTER = "from utils import put_rows\n\nput_rows(x, s)\n"


def _files(tmp_path: Path) -> None:
    (tmp_path / "impl.py").write_text(IMPL)
    (tmp_path / "utils.py").write_text(UTILS)
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(IMPORTER)


def _importer(workspace: Workspace, tmp_path: Path, name: str) -> ModuleInfo:
    module = workspace.current(str(tmp_path / name))
    assert module is not None
    return module


def _located(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every import `Workspace.locate` resolves, by the importer's file name and the import."""
    located: list[tuple[str, str]] = []
    locate = Workspace.locate

    def spy(self: Workspace, importer: ModuleInfo, dotted: str, level: int) -> tuple[str, str] | None:
        located.append((Path(importer.path).name, dotted))
        return locate(self, importer, dotted, level)

    monkeypatch.setattr(Workspace, "locate", spy)
    return located


def test_a_snapshot_searches_an_imported_helper_module_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _files(tmp_path)
    located = _located(monkeypatch)
    workspace = Workspace([tmp_path], snapshot=True)
    assert helper_names(workspace, _importer(workspace, tmp_path, "a.py")) == {"put_rows"}
    assert helper_names(workspace, _importer(workspace, tmp_path, "b.py")) == {"put_rows"}
    assert located.count(("utils.py", "impl")) == 1
    assert located.count(("a.py", "utils")) == located.count(("b.py", "utils")) == 1
    workspace.refresh()
    helper_names(workspace, _importer(workspace, tmp_path, "b.py"))
    assert located.count(("utils.py", "impl")) == 2  # a new snapshot searches again


def test_without_a_snapshot_every_importer_searches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editor's workspace may change between two analyses: nothing is kept."""
    _files(tmp_path)
    located = _located(monkeypatch)
    workspace = Workspace([tmp_path])
    for name in ("a.py", "b.py"):
        assert helper_names(workspace, _importer(workspace, tmp_path, name)) == {"put_rows"}
    assert located.count(("utils.py", "impl")) == 2


def test_a_kept_answer_notes_the_reads_a_fresh_search_notes(tmp_path: Path) -> None:
    _files(tmp_path)
    noted: list[WorkspaceReads] = []
    fresh, kept = Workspace([tmp_path]), Workspace([tmp_path], snapshot=True)
    for workspace, name in ((fresh, "b.py"), (kept, "a.py"), (kept, "b.py")):
        workspace.reads = None  # the importer's own text is read apart from its search
        importer = _importer(workspace, tmp_path, name)
        workspace.reads = WorkspaceReads()
        helper_names(workspace, importer)
        noted.append(workspace.reads)
    for reads in noted[1:]:
        assert reads.texts == noted[0].texts
        assert reads.probes == noted[0].probes
    assert noted[0].texts[str(tmp_path / "impl.py")] == IMPL
