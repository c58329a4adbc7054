"""What is analysed at once: an open Python file, or an open notebook's code cells joined in
order (a notebook's cells share one namespace, so the mesh of cell 2 shards the arrays of cell 5).

A `Unit` carries the text the analyzer reads and the way back from its lines to the editor
documents (the file, or each cell) that positions in LSP messages refer to.
"""

from __future__ import annotations

import bisect
import itertools
import weakref
from dataclasses import dataclass, field

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument, Workspace

from shardls.analysis.text_diff import LineEdit, line_edit
from shardls.files import source_lines
from shardls.notebook import join_cells

PYTHON_SUFFIXES = (".py", ".pyi")
_SERIALS = itertools.count()


@dataclass(frozen=True)
class Part:
    """One editor document inside a unit: the whole file, or one code cell."""

    uri: str
    first_line: int
    line_count: int
    version: int | None


@dataclass(frozen=True)
class Unit:
    uri: str
    """The file's or the notebook's URI."""
    path: str
    """What the analyzer calls the file: imports resolve from its folder."""
    text: str
    version: object
    """Changes whenever the text of any part changes."""
    parts: tuple[Part, ...]
    lines: tuple[str, ...] = field(default=(), repr=False, compare=False)
    """The text's lines (`source_lines`): computed when not given."""
    edit: LineEdit | None = field(default=None, repr=False, compare=False)
    """The lines this text changed of the unit of the document's text before it (`previous`):
    what a diagnostic's JSON rests on is unchanged outside them (`wire.Serialised`)."""
    previous: int | None = field(default=None, repr=False, compare=False)
    """The `serial` of that unit."""
    serial: int = field(default_factory=lambda: next(_SERIALS), repr=False, compare=False)
    """Which unit this is, unique in the process (a unit may be gone when the next is made)."""
    _starts: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """Each part's first line, for `part_at` (asked for every diagnostic of every publish)."""

    def __post_init__(self) -> None:
        if not self.lines:
            object.__setattr__(self, "lines", source_lines(self.text))
        object.__setattr__(self, "_starts", tuple(part.first_line for part in self.parts))

    @property
    def is_notebook(self) -> bool:
        return self.path.endswith(".ipynb")

    def part(self, uri: str) -> Part | None:
        return next((part for part in self.parts if part.uri == uri), None)

    def part_at(self, line: int) -> Part:
        """The part holding a line of the unit's text."""
        if len(self.parts) == 1:
            return self.parts[0]
        return self.parts[max(0, bisect.bisect_right(self._starts, line) - 1)]


def unit_for(workspace: Workspace, uri: str) -> Unit | None:
    """The unit a document (a file, a notebook or one of its cells) belongs to; None: not Python."""
    notebook = workspace.get_notebook_document(cell_uri=uri) or workspace.get_notebook_document(
        notebook_uri=uri
    )
    if notebook is not None:
        return _notebook_unit(workspace, notebook)
    document = open_document(workspace, uri)
    if document is None or not is_python(document):
        return None
    source, version = document.source, document.version
    cached = _FILE_UNITS.get(document)
    if cached is not None and cached.text is source and cached.version == version:
        return cached
    edit = previous = None
    if cached is not None and "\r" not in source and "\r" not in cached.text:
        edit, previous = line_edit(cached.text, cached.lines, source), cached.serial
        lines = edit.lines  # the lines the edit left are kept
    else:
        lines = source_lines(source)
    part = Part(document.uri, 0, len(lines), version)
    unit = Unit(document.uri, document.path, source, version, (part,), lines, edit, previous)
    _FILE_UNITS[document] = unit
    return unit


_FILE_UNITS: weakref.WeakKeyDictionary[TextDocument, Unit] = weakref.WeakKeyDictionary()
"""The unit of each open file's current text: every request asks for it, and splitting a
20k-line text into lines (twice) took 4 ms, most of a hover's time. Kept while the document
object lives; reused while its text is the same object and its version the same, and the next
version's lines are made from it, splitting only the lines an edit touched."""


def open_units(workspace: Workspace) -> list[Unit]:
    """Every open Python file and notebook."""
    units = [unit_for(workspace, uri) for uri in workspace.notebook_documents]
    units += [
        unit_for(workspace, uri)
        for uri in workspace.text_documents
        if workspace.get_notebook_document(cell_uri=uri) is None
    ]
    return [unit for unit in units if unit is not None]


def open_document(workspace: Workspace, uri: str) -> TextDocument | None:
    """The editor's document (keyed by its exact URI, see EditorWorkspace); None: not open."""
    document: TextDocument | None = workspace.text_documents.get(uri)
    return document


def is_python(document: TextDocument) -> bool:
    return document.language_id == "python" or document.path.endswith(PYTHON_SUFFIXES)


def _notebook_unit(workspace: Workspace, notebook: types.NotebookDocument) -> Unit:
    cells = [
        (number, document)
        for number, cell in enumerate(notebook.cells, start=1)
        if cell.kind == types.NotebookCellKind.Code
        and (document := open_document(workspace, cell.document)) is not None
        and is_python(document)
    ]
    joined = join_cells((number, document.source) for number, document in cells)
    parts = tuple(
        Part(document.uri, first, count, document.version)
        for (_, document), first, count in zip(cells, joined.first_lines, joined.line_counts, strict=True)
    )
    path = to_fs_path(notebook.uri) or notebook.uri
    version = (notebook.version, tuple(part.version for part in parts))
    return Unit(notebook.uri, path, joined.text, version, parts)
