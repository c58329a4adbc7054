"""The files the analyzer may read (never run): module resolution across a workspace, with texts
from the editor taking precedence over the disk, and caches invalidated by content."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import weakref
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from shardls.analysis.data_file import DataFile
from shardls.files import decode_source_loosely, read_workspace_file

if TYPE_CHECKING:  # imported when a module is first parsed: a check answered from the cache parses none
    from shardls.analysis.module_info import ModuleInfo
    from shardls.analysis.module_versions import ModuleVersions
    from shardls.analysis.source import SegmentParser

MAX_FILE_CHARS = 1_000_000
MAX_FILE_LINES = 50_000
"""Files beyond either bound are neither analysed nor read for imports: parsing and analysis
cost time and memory linear in a file's size, and these keep the worst case of any file within
the bound documented in docs/security.md (no real model file comes close)."""
MAX_WORKSPACE_FILES = 2_000
_SKIPPED = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "env", "build", "dist"})
MESH_TEXT = re.compile(r"make_mesh|Mesh\b|set_mesh|create_device_mesh|use_abstract_mesh")
"""Text that may build or set a mesh: the files the search for the workspace's only mesh reads."""
MODULE_CACHE = 512
"""Modules kept in all, and file texts and data files read."""
Version: TypeAlias = "ModuleInfo | DataFile | None"
"""Another file as a result read it: a module, a data file, or None (no module was found)."""
SEARCHES = {MESH_TEXT.pattern: MESH_TEXT}
"""The searches of `files_mentioning` by their text, for checking a noted search again."""


def too_large(text: str) -> str | None:
    """Why shardls does not analyse this text (None: it does)."""
    if len(text) > MAX_FILE_CHARS:
        return f"the file has {len(text):,} characters; shardls analyses files of up to {MAX_FILE_CHARS:,}"
    lines = text.count("\n") + text.count("\r") - text.count("\r\n") + 1
    if lines > MAX_FILE_LINES:
        return f"the file has {lines:,} lines; shardls analyses files of up to {MAX_FILE_LINES:,}"
    return None


MODELLED_LIBRARIES = frozenset({"jax", "flax", "numpy"})
"""Top-level packages whose calls `analysis/library` models: a workspace copy of their source
(the flax repository itself) is not read in their place."""


@dataclass
class WorkspaceReads:
    """What one analysis learnt of the workspace, for keying a persistent cache of its result:
    the text of each file read (None: absent or not readable), each file whose existence decided
    an import, the files each search found (`files_mentioning`), and whether it listed the
    workspace's files (then any file may have mattered)."""

    texts: dict[str, str | None] = field(default_factory=dict)
    probes: dict[str, bool] = field(default_factory=dict)
    searches: dict[str, tuple[str, ...]] = field(default_factory=dict)
    listed: bool = False
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    """Computations over the workspace whose result the analysis used, by name (`WORKSPACE_MESH`): a
    change in what they read matters only if it changes their result."""

    def merge(self, other: WorkspaceReads) -> None:
        self.texts.update(other.texts)
        self.probes.update(other.probes)
        self.searches.update(other.searches)
        self.listed = self.listed or other.listed
        self.outcomes.update(other.outcomes)


@dataclass(frozen=True)
class Outcome:
    """What a computation over the workspace read, and the result the analysis took from it."""

    reads: WorkspaceReads
    result: object


WORKSPACE_MESH = "workspace-mesh"
"""The outcome of the search for the workspace's only mesh: the mesh a file without one of its
own falls back on (a `MeshFact`, or None). Editing a file that builds a mesh changes it only
when it changes the meshes found."""


class Workspace:
    """Module lookup for imports: `from .config import X`, `import configs as C`, packages."""

    def __init__(
        self, roots: list[Path] | None = None, parser: SegmentParser | None = None, snapshot: bool = False
    ) -> None:
        self.roots = [_resolved(str(root)) for root in roots or []]
        self.snapshot = snapshot
        """The disk does not change until `refresh` (one `check` run): the listing of the files
        and what searches of them find are kept, so each file costs the same however many the
        workspace holds (otherwise every file would read the whole workspace again)."""
        self.generation = 0
        """Changes on every `refresh`: what callers keep about a snapshot is keyed by it."""
        self._listing: list[str] | None = None
        self._mentioning: dict[str, list[str]] = {}
        self._mentions: dict[tuple[str, str], tuple[str, bool]] = {}
        """Per pattern and file: the text last searched and whether the pattern found something
        in it. The server searches every file of the folder for a mesh on each edit of a file
        that builds none; a search of the same text (the same object, while the disk's or the
        editor's text is unchanged) is answered from here (the search of maxtext's `models/`, 27
        files: 7.0 → 1.6 ms per edit of `deepseek_batchsplit.py` on a loaded machine)."""
        self._probed: dict[tuple[str, str, int], tuple[tuple[Path, str, bool], ...]] = {}
        """In a snapshot: the files each import (importer's folder, dotted name, level) may mean,
        with whether each exists (`_probes`). Every file of a package imports the same modules,
        and finding them resolved links and asked the disk again for each import of each file
        (5,755 times in a serial check of maxtext). Keyed by the folder, not the file: the files
        an import may mean depend on the importer only through it (`_folder`), and the files of
        one folder import the same modules: a check of maxtext probes 17,378 paths, not 37,768.
        Those an absolute import may mean under the roots, tried first from every folder, are
        kept once (by an empty folder), not once per folder that imports it."""
        self._folders: dict[str, Path] = {}
        """In a snapshot: the folder of each importer, its links resolved (`_folder`)."""
        self.answers: dict[tuple[int, Hashable], tuple[weakref.ref[ModuleInfo], object, WorkspaceReads]] = {}
        """In a snapshot: answers about a module that rest on it and on what the workspace holds,
        with what they read (`workspace_answers.kept`); cleared with the probes."""
        self._parser = parser
        self._overlay: dict[str, str] = {}
        self._disk: dict[str, tuple[tuple[int, int], str]] = {}
        self._data: dict[str, DataFile] = {}
        self.reads: WorkspaceReads | None = None
        """When set, every read of the workspace is noted in it (see WorkspaceReads)."""

    # -- texts ------------------------------------------------------------------------------

    def set_text(self, path: str, text: str | None) -> None:
        """Editor contents override the disk; None returns the file to its disk contents."""
        key = _normalize(path)
        self._probed.clear()  # an editor's file exists whatever the disk says
        self.answers.clear()
        if text is None:
            self._overlay.pop(key, None)
        else:
            self._overlay[key] = text

    def text_of(self, path: str) -> str | None:
        """The editor's text, else the file's (re-read only when its size or mtime changed)."""
        key = _normalize(path)
        text = self._text_of(key)
        if self.reads is not None:
            self.reads.texts[key] = text
        return text

    def _text_of(self, key: str) -> str | None:
        if key in self._overlay:
            return self._overlay[key]
        try:
            status = os.stat(key)
        except OSError:
            return None
        stamp = (status.st_mtime_ns, status.st_size)
        cached = self._disk.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        try:
            text = decode_source_loosely(read_workspace_file(key, self.roots, 4 * MAX_FILE_CHARS))
        except OSError:
            return None
        if too_large(text) is not None:
            return None
        self._disk[key] = (stamp, text)
        while len(self._disk) > MODULE_CACHE:
            self._disk.pop(next(iter(self._disk)))
        return text

    @contextlib.contextmanager
    def apart(self) -> Iterator[WorkspaceReads]:
        """Note what a computation reads apart from the analysis under way (which notes its
        outcome instead, `note_outcome`)."""
        outer, inner = self.reads, WorkspaceReads()
        self.reads = inner
        try:
            yield inner
        finally:
            self.reads = outer

    def note_outcome(self, name: str, reads: WorkspaceReads, result: object) -> None:
        """The analysis under way used `result`, computed by reading `reads`."""
        if self.reads is not None:
            self.reads.outcomes[name] = Outcome(reads, result)

    def refresh(self) -> None:
        """The disk may have changed (a new `check` run): list and search the files again."""
        self.generation += 1
        self._listing = None
        self._mentioning.clear()
        self._probed.clear()
        self._folders.clear()
        self.answers.clear()

    def files_mentioning(self, pattern: re.Pattern[str]) -> list[str]:
        """The workspace's Python files whose current text `pattern` finds something in."""
        found = self._mentioning.get(pattern.pattern) if self.snapshot else None
        if found is None:
            outer, self.reads = self.reads, None  # the search is noted as a whole, below
            try:
                found = [
                    path
                    for path in self.python_files()
                    if (text := self.text_of(path)) is not None and self._mentions_in(pattern, path, text)
                ]
            finally:
                self.reads = outer
            if self.snapshot:
                self._mentioning[pattern.pattern] = found
        if self.reads is not None:
            self.reads.searches[pattern.pattern] = tuple(found)
        return found

    def _mentions_in(self, pattern: re.Pattern[str], path: str, text: str) -> bool:
        key = (pattern.pattern, path)
        kept = self._mentions.get(key)
        if kept is not None and kept[0] is text:
            return kept[1]
        found = pattern.search(text) is not None
        if len(self._mentions) >= 4 * MODULE_CACHE:
            self._mentions.clear()  # texts of files long gone from the disk's cache
        self._mentions[key] = (text, found)
        return found

    def python_files(self) -> list[str]:
        """The workspace's Python files (at most MAX_WORKSPACE_FILES), skipping environments,
        caches and hidden folders."""
        if self.reads is not None:
            self.reads.listed = True
        if self._listing is None or not self.snapshot:
            self._listing = self._list_python_files()
        return self._listing

    def _list_python_files(self) -> list[str]:
        found: list[str] = []
        for root in self.roots:
            for folder, subfolders, files in os.walk(root):
                subfolders[:] = sorted(d for d in subfolders if d not in _SKIPPED and not d.startswith("."))
                found.extend(os.path.join(folder, name) for name in sorted(files) if name.endswith(".py"))
                if len(found) >= MAX_WORKSPACE_FILES:
                    return found[:MAX_WORKSPACE_FILES]
        return found

    def current(self, path: str) -> ModuleInfo | None:
        """The module for the file's current text (the same object while the text is unchanged)."""
        text = self.text_of(path)
        return None if text is None else self.module(path, text)

    def module(self, path: str, text: str, name: str | None = None) -> ModuleInfo:
        """The parsed module for this exact text (cached by path and content, `ModuleVersions`)."""
        return self._versions.module(_normalize(path), path, text, lambda: name or self.module_name(path))

    def forget(self, path: str) -> None:
        """Drop the modules made for the file and their trees (an editor closed it): a later
        import or analysis of it parses its text again."""
        self._versions.forget(_normalize(path))

    @functools.cached_property
    def _versions(self) -> ModuleVersions:
        """Made when first asked for a module: the parser's modules are 8 ms of start-up, which
        a check answered from the cache (it reads and hashes files, and parses none) never pays."""
        from shardls.analysis.module_versions import ModuleVersions
        from shardls.analysis.source import SegmentParser

        return ModuleVersions(self._parser or SegmentParser(), MODULE_CACHE)

    def data_file(self, path: str) -> DataFile:
        """A file read as data (a YAML config) in its current text: the same object while the
        text is unchanged, so that a kept result that read it is kept while it is."""
        key = _normalize(path)
        text = self.text_of(key)
        kept = self._data.get(key)
        if kept is None or kept.text != text:
            kept = self._data[key] = DataFile(key, text)
            while len(self._data) > MODULE_CACHE:
                self._data.pop(next(iter(self._data)))
        return kept

    def within(self, path: str, importer: ModuleInfo) -> bool:
        """Whether `path` is inside the workspace's roots (without roots: inside the folder of
        `importer`), its links resolved: shardls reads nothing outside the workspace."""
        real = os.path.realpath(path)
        roots = [str(root) for root in self.roots] or [os.path.dirname(os.path.abspath(importer.path))]
        return any(
            os.path.commonpath([real, os.path.realpath(root)]) == os.path.realpath(root) for root in roots
        )

    # -- imports ----------------------------------------------------------------------------

    def module_name(self, path: str) -> str | None:
        resolved = _resolved(path)
        for root in self.roots:
            try:
                relative = resolved.relative_to(root)
            except ValueError:
                continue
            parts = list(relative.with_suffix("").parts)
            if parts and parts[-1] == "__init__":
                parts.pop()
            return ".".join(parts) or None
        return None

    def resolve(self, importer: ModuleInfo, dotted: str, level: int) -> ModuleInfo | None:
        """The workspace module `dotted` means inside `importer` (None: not in the workspace).
        The libraries shardls models are never read from source, even in their own repository
        (`from flax import nnx` in flax's docs means the modelled Flax)."""
        located = self.locate(importer, dotted, level)
        return self.module(*located) if located is not None else None

    def locate(self, importer: ModuleInfo, dotted: str, level: int) -> tuple[str, str] | None:
        """The path and text of the module `resolve` finds, without parsing it (what a cheap
        test of the text may then spare: `walking/helper_imports.py`)."""
        if not level and dotted.split(".", 1)[0] in MODELLED_LIBRARIES:
            return None
        for candidate in self._candidates(importer, dotted, level):
            text = self.text_of(str(candidate))
            if text is not None:
                return str(candidate), text
        return None

    def _candidates(self, importer: ModuleInfo, dotted: str, level: int) -> list[Path]:
        """The files that exist among those the import may mean, in the order they are tried.
        Each probe is noted in `reads` as it would be by asking the disk, also when the
        snapshot already knows the answer."""
        folder = self._folder(importer)
        if level:
            probes = self._probes(folder, dotted, level)
        else:  # the roots first, whatever the importer's folder: probed once per import
            probes = self._probes(None, dotted, 0) + self._probes(folder, dotted, 0)
        if self.reads is not None:
            self.reads.probes.update((normalized, exists) for _, normalized, exists in probes)
        return [candidate for candidate, _, exists in probes if exists]

    def _probes(self, folder: Path | None, dotted: str, level: int) -> tuple[tuple[Path, str, bool], ...]:
        """Each file the import may mean from a module of `folder` (None: under the roots, for an
        absolute import), with whether it exists; kept in a snapshot."""
        key = ("" if folder is None else str(folder), dotted, level)
        probes = self._probed.get(key) if self.snapshot else None
        if probes is None:
            probes = tuple(self._probe(candidate) for candidate in self._paths(folder, dotted, level))
            if self.snapshot:
                self._probed[key] = probes
        return probes

    def _folder(self, importer: ModuleInfo) -> Path:
        """The folder an importer's imports are resolved from: its file's, links resolved (the
        file's own link too). Asked for every import of every file, so kept in a snapshot:
        resolving links asks the disk for each part of the path."""
        folder = self._folders.get(importer.path) if self.snapshot else None
        if folder is None:
            folder = _resolved(importer.path).parent
            if self.snapshot:
                self._folders[importer.path] = folder
        return folder

    def _paths(self, folder: Path | None, dotted: str, level: int) -> list[Path]:
        """Every file the import may mean from a module of `folder` (None: under the roots), in
        the order they are tried."""
        parts = [p for p in dotted.split(".") if p]
        bases: list[Path] = []
        if folder is None:
            # A `src/` layout's packages import as top-level names, as pyright resolves them.
            bases.extend(base for root in self.roots for base in (root, root / "src"))
        elif level:
            base = folder
            for _ in range(level - 1):
                base = base.parent
            bases.append(base)
        else:
            bases.append(folder)
        paths = []
        for base in bases:
            target = base.joinpath(*parts) if parts else base
            if parts:
                paths.append(target.with_suffix(".py"))
            paths.append(target / "__init__.py")
        return paths

    def _probe(self, candidate: Path) -> tuple[Path, str, bool]:
        key = _normalize(str(candidate))
        return candidate, key, key in self._overlay or candidate.is_file()


def _resolved(path: str) -> Path:
    """The path with links resolved; as given (made absolute) when no file can have it (a NUL
    byte from an editor's URI makes `resolve` raise)."""
    try:
        return Path(path).resolve()
    except (OSError, ValueError):
        return Path(os.path.abspath(path))


def _normalize(path: str) -> str:
    return os.path.normpath(os.path.abspath(path))
