"""Import resolution in a snapshot of the disk (`Workspace(snapshot=True)`, one `check` run):
the files an import may mean are probed once per importer's folder and import, and each later resolution
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


def test_the_files_of_a_folder_share_their_probes(tmp_path: Path) -> None:
    """The files an import may mean depend on the importer only through its folder: a sibling's
    import of the same module is answered by the first one's probes (maxtext's 692 files probed
    37,768 paths by file, 17,378 by folder)."""
    _package(tmp_path)
    (tmp_path / "pkg" / "other.py").write_text("from pkg import config\n")
    probes = _probed_after_removal(tmp_path, tmp_path / "pkg" / "other.py")
    assert probes[str(tmp_path / "pkg" / "config.py")]  # the disk is not asked again: the file was there


def _probed_after_removal(tmp_path: Path, other: Path) -> dict[str, bool]:
    """The probes `other`'s `from pkg import config` notes in a snapshot where `pkg/main.py`
    resolved it before `pkg/config.py` was deleted."""
    workspace = Workspace([tmp_path], snapshot=True)
    assert workspace.resolve(_importer(tmp_path, workspace), "pkg.config", 0) is not None
    (tmp_path / "pkg" / "config.py").unlink()
    importer = workspace.module(str(other), "from pkg import config\n")
    workspace.reads = WorkspaceReads()
    workspace.resolve(importer, "pkg.config", 0)
    return workspace.reads.probes


def test_a_linked_importer_imports_from_the_folder_it_links_to(tmp_path: Path) -> None:
    """The folder is the importer's with links resolved, its own link too: a linked file and a
    real file side by side resolve a relative import from different folders."""
    _package(tmp_path)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "real.py").write_text("from . import config\n")
    (tmp_path / "other" / "linked.py").symlink_to(tmp_path / "pkg" / "main.py")
    workspace = Workspace([tmp_path], snapshot=True)
    linked = workspace.module(str(tmp_path / "other" / "linked.py"), "from . import config\n")
    real = workspace.module(str(tmp_path / "other" / "real.py"), "from . import config\n")
    found = workspace.resolve(linked, "config", 1)
    assert found is not None and found.path.endswith("pkg/config.py")
    assert workspace.resolve(real, "config", 1) is None


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


def test_the_folders_of_a_workspace_share_the_probes_under_its_roots(tmp_path: Path) -> None:
    """An absolute import tries the files under the roots first, whatever the importer's folder:
    an importer in another folder is answered by the first one's probes of them."""
    _package(tmp_path)
    (tmp_path / "tools").mkdir()
    probes = _probed_after_removal(tmp_path, tmp_path / "tools" / "run.py")
    assert probes[str(tmp_path / "pkg" / "config.py")]  # the disk is not asked again: the file was there
    assert not probes[str(tmp_path / "tools" / "pkg" / "config.py")]
