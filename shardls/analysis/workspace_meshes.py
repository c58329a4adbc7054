"""The meshes the other files of a workspace build, for a file that builds none itself (a model
file next to the training script that makes the mesh): when exactly one is built anywhere, the
file is laid out on it.

The search is bounded (WORKSPACE_SCAN_STEPS over all the files it reads), stops as soon as no
file can have exactly one mesh elsewhere, and caches each file's meshes per text, so that a file
without a mesh does not scan the workspace again on every keystroke.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import replace

from shardls.analysis.evaluator import Evaluator, Limits
from shardls.analysis.facts import MeshFact
from shardls.analysis.library import Environment, Library
from shardls.analysis.mesh_pass import find_meshes
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.sites import SiteBuilder
from shardls.analysis.workspace import MESH_TEXT, WORKSPACE_MESH, Workspace, WorkspaceReads

WORKSPACE_SCAN_STEPS = 150_000
"""Evaluation steps one search for the workspace's only mesh may take over all the files it reads
(files read before cost nothing); beyond it the search gives no answer rather than a wrong one."""
_CACHED_MESH_SCANS = 2_048
"""Other files' meshes kept (one entry per file and environment), so that a file without a
mesh does not scan the workspace again on every keystroke."""


_MeshesByFile = tuple[tuple[str, tuple[MeshFact, ...]], ...] | None
"""The meshes of the workspace's files, by file (None: the search ran out of steps)."""


class WorkspaceMeshes:
    """The search for a workspace's meshes, with its caches (one per analyzer)."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._scans: dict[tuple[int, Environment], tuple[_MeshesByFile, WorkspaceReads]] = {}
        """Per snapshot and environment: the search's result, and what it read."""
        self._mesh_scans: OrderedDict[tuple[str, Environment], tuple[ModuleInfo, list[MeshFact]]] = (
            OrderedDict()
        )

    def only_mesh(self, path: str, environment: Environment, device_count: int) -> MeshFact | None:
        """The only mesh built anywhere in the workspace, for a file that builds none itself
        (a model file next to the training script that makes the mesh). The analysis under way
        rests on this result, not on every file the search read (`Workspace.note_outcome`)."""
        scanned, reads = self.by_file(path, environment, device_count)
        found = [mesh for other, meshes in scanned or () if not _same_file(other, path) for mesh in meshes]
        result = None
        if scanned is not None and len(found) == 1:
            mesh = found[0]
            where = f"{os.path.relpath(mesh.path or '', os.path.dirname(path))}:{(mesh.span.line + 1) if mesh.span else '?'}"
            result = replace(mesh, selection=f"the only mesh in the workspace ({where})", fallback=True)
        self.workspace.note_outcome(WORKSPACE_MESH, reads, result)
        return result

    def by_file(
        self, path: str, environment: Environment, device_count: int
    ) -> tuple[_MeshesByFile, WorkspaceReads]:
        """The meshes of the workspace's files that build some, by file, until no file can have
        exactly one mesh elsewhere (None when WORKSPACE_SCAN_STEPS ran out first), and what the
        search read. In a snapshot of the disk (a `check` run) this is found once for all files,
        which keeps `check` linear in files; otherwise `path`, the file being analysed, is left
        out."""
        key = (self.workspace.generation, environment)
        if self.workspace.snapshot and key in self._scans:
            return self._scans[key]
        with self.workspace.apart() as reads:
            result = self._scan(path, environment, device_count)
        if self.workspace.snapshot:
            if any(generation != key[0] for generation, _ in self._scans):
                self._scans.clear()  # an earlier run's
            self._scans[key] = (result, reads)
        return result, reads

    def _scan(self, path: str, environment: Environment, device_count: int) -> _MeshesByFile:
        by_file: list[tuple[str, tuple[MeshFact, ...]]] = []
        result: _MeshesByFile = None
        left = WORKSPACE_SCAN_STEPS
        for other in self.workspace.files_mentioning(MESH_TEXT):
            text = self.workspace.text_of(other)
            if text is None or (not self.workspace.snapshot and _same_file(other, path)):
                continue
            meshes, spent = self._meshes_of(other, text, environment, device_count, left)
            left -= spent
            if meshes is None:
                break
            if meshes:
                by_file.append((other, tuple(meshes)))
                counts = [len(found) for _, found in by_file]
                # Two meshes outside the file being analysed answer "none"; in a snapshot that
                # file is any of them, so two outside the file with the most.
                if sum(counts) - (max(counts) if self.workspace.snapshot else 0) >= 2:
                    result = tuple(by_file)
                    break
        else:
            result = tuple(by_file)
        return result

    def _meshes_of(
        self, path: str, text: str, environment: Environment, device_count: int, budget: int
    ) -> tuple[list[MeshFact] | None, int]:
        """The meshes another file builds and the steps that took, computed once per text of that
        file (a change only in what it imports is seen when the file next changes); None when
        `budget` (or the file's own) ran out first."""
        module = self.workspace.module(path, text)
        key = (path, environment)
        cached = self._mesh_scans.get(key)
        if cached is not None and cached[0] is module:
            self._mesh_scans.move_to_end(key)
            return cached[1], 0
        library = Library(environment)
        allowed = min(budget, Limits().file_budget(len(text)))
        evaluator = Evaluator(self.workspace, library, budget=allowed)
        scan = SiteBuilder(evaluator, library, path, device_count, None, False, None, [])
        meshes = find_meshes(evaluator, module, scan)
        spent = allowed - (evaluator.budget_left or 0)
        if not evaluator.budget_left:
            return None, spent
        self._mesh_scans[key] = (module, meshes)
        while len(self._mesh_scans) > _CACHED_MESH_SCANS:
            self._mesh_scans.popitem(last=False)
        return meshes, spent


def _same_file(first: str, second: str) -> bool:
    """Whether two paths name one file (links resolved; a file deleted meanwhile is not an error)."""
    return os.path.realpath(first) == os.path.realpath(second)
