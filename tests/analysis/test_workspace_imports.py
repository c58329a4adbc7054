"""Import resolution in a snapshot of the disk (`Workspace(snapshot=True)`, one `check` run):
the files an import may mean are probed once per importer and import, and each later resolution
notes the same probes in `WorkspaceReads` as a fresh one, so that a persistent cache entry rests
on the same facts."""

from __future__ import annotations

from pathlib import Path

from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.workspace import Workspace, WorkspaceReads


def _importer(tmp_path: Path, workspace: Workspace) -> ModuleInfo:
    path = tmp_path / "pkg" / "main.py"
    return workspace.module(str(path), path.read_text())


def _package(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "main.py").write_text("from pkg import config\n")
    (tmp_path / "pkg" / "config.py").write_text("SIZE = 8\n")


def test_a_snapshot_probes_the_disk_once_per_import_until_refreshed(tmp_path: Path) -> None:
    _package(tmp_path)
    workspace = Workspace([tmp_path], snapshot=True)
    importer = _importer(tmp_path, workspace)
    config = str(tmp_path / "pkg" / "config.py")

    def probed() -> bool:
        workspace.reads = WorkspaceReads()
        workspace.resolve(importer, "pkg.config", 0)
        return workspace.reads.probes[config]

    assert probed()
    (tmp_path / "pkg" / "config.py").unlink()
    assert probed()  # the snapshot takes the disk not to change: the probe is not made again
    workspace.refresh()
    assert not probed()


def test_a_kept_resolution_notes_the_probes_a_fresh_one_notes(tmp_path: Path) -> None:
    _package(tmp_path)
    fresh, kept = Workspace([tmp_path]), Workspace([tmp_path], snapshot=True)
    noted = []
    for workspace in (fresh, kept, kept):
        importer = _importer(tmp_path, workspace)
        workspace.reads = WorkspaceReads()
        workspace.resolve(importer, "pkg.config", 0)
        noted.append(workspace.reads.probes)
    assert noted[0] == noted[1] == noted[2]
    assert any(path.endswith("config.py") and exists for path, exists in noted[0].items())
    assert any(not exists for exists in noted[0].values())


def test_an_editor_text_is_found_by_an_import_already_probed(tmp_path: Path) -> None:
    _package(tmp_path)
    workspace = Workspace([tmp_path], snapshot=True)
    importer = _importer(tmp_path, workspace)
    assert workspace.resolve(importer, "pkg.extra", 0) is None
    workspace.set_text(str(tmp_path / "pkg" / "extra.py"), "N = 1\n")
    found = workspace.resolve(importer, "pkg.extra", 0)
    assert found is not None and found.path.endswith("extra.py")
