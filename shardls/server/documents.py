"""The editor's open documents: pygls's Workspace and TextDocument, with LSP's rules.

Why not pygls's own: its TextDocument numbers lines with `str.splitlines`, which also ends a
line at a form feed, `\\x0b`, `\\x1c`-`\\x1e`, `\\x85`, U+2028 and U+2029; editors do not (LSP: only
`\\n`, `\\r\\n` and `\\r` end a line), so after one such character every incremental edit landed
lines away from where the user typed, and the server analysed a text nobody had. Its Workspace
keys documents by their unquoted URI, so two spellings of one file's URI (`b.py` and `b%2Epy`)
were one document, and the spelling opened first never got its diagnostics again: here each URI
the client opens is its own document, as it is to the client.

A document larger than `FOLLOWED_CHARS` is `oversized`: the server stops applying its
incremental edits (the server ignores them at once, see `ShardServer`), since each would cost
time in proportion to the document while its analysis is refused anyway (too large). A change
of the whole text, or opening it again, follows it again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

from shardls.analysis.workspace import MAX_FILE_CHARS

FOLLOWED_CHARS = 4 * MAX_FILE_CHARS
"""Characters up to which a document's incremental edits are applied: four times what the
analyzer reads, so that a file cut back under the analysis bound is analysed again."""

_LINE_END = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")
"""Where LSP ends a line: after `\\n`, and after a `\\r` that does not start `\\r\\n`."""


def lsp_lines(text: str) -> tuple[str, ...]:
    """The text's lines with their line ends, split where LSP splits them and nowhere else (as
    `str.splitlines(keepends=True)` would, were form feeds and Unicode separators not line ends).
    A text without `\r` (most) is split at `\n` by `str.split`, 6× faster than the expression."""
    if "\r" in text:
        lines = _LINE_END.split(text)
    else:
        lines = [line + "\n" for line in text.split("\n")]
        lines[-1] = lines[-1][:-1]
    if lines and not lines[-1]:
        lines.pop()
    return tuple(lines)


class EditorDocument(TextDocument):
    """pygls's TextDocument with LSP's line ends, its lines computed once per text."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._lines: tuple[str | None, tuple[str, ...]] = (None, ())

    @property
    def lines(self) -> Sequence[str]:
        source = self.source
        if self._lines[0] is not source:
            self._lines = (source, lsp_lines(source))
        return self._lines[1]

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        """pygls's edit, without its pass over every line: the lines before and after the edited
        ones are kept as they are, and only the edited ones are split again (an edit of a 20k-line
        document took 15 ms, now well under one)."""
        lines = self.lines
        edited = self._position_codec.range_from_client_units(lines, change.range)
        first, last = edited.start.line, edited.end.line
        if not first <= last < len(lines):
            super()._apply_incremental_change(change)  # at or past the end: pygls's own way
            return
        middle = lines[first][: edited.start.character] + change.text + lines[last][edited.end.character :]
        ends_line = middle.endswith("\n") or last == len(lines) - 1
        if not ends_line or "\r" in middle or (first and lines[first - 1].endswith("\r")):
            super()._apply_incremental_change(change)  # lines may join across the edit
            return
        new_lines = (*lines[:first], *lsp_lines(middle), *lines[last + 1 :])
        self._source = "".join(new_lines)
        self._lines = (self._source, new_lines)

    @property
    def oversized(self) -> bool:
        """Too large for its incremental edits to be followed (see the module's docstring)."""
        return len(self.source) > FOLLOWED_CHARS


class EditorWorkspace(Workspace):
    """pygls's Workspace holding EditorDocuments, each under the exact URI the client opened it
    with. (Notebooks and the cells' notebooks stay keyed as pygls keys them.)"""

    @classmethod
    def like(cls, workspace: Workspace) -> EditorWorkspace:
        """A workspace with the root, folders and position encoding `initialize` gave the other."""
        return cls(
            workspace.root_uri,
            types.TextDocumentSyncKind.Incremental,
            list(workspace.folders.values()),
            workspace.position_encoding,
        )

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return EditorDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=types.TextDocumentSyncKind.Incremental,
            position_codec=self.position_codec,
        )

    def get_text_document(self, doc_uri: str) -> TextDocument:
        return self._text_documents.get(doc_uri) or self._create_text_document(doc_uri)

    def put_text_document(
        self, text_document: types.TextDocumentItem, notebook_uri: str | None = None
    ) -> None:
        uri = text_document.uri
        self._text_documents[uri] = self._create_text_document(
            uri, text_document.text, text_document.version, text_document.language_id
        )
        if notebook_uri:
            self._cell_in_notebook[unquote(uri)] = unquote(notebook_uri)

    def remove_text_document(self, doc_uri: str) -> None:
        self._text_documents.pop(doc_uri, None)
        self._cell_in_notebook.pop(unquote(doc_uri), None)

    def update_text_document(
        self, text_doc: types.VersionedTextDocumentIdentifier, change: types.TextDocumentContentChangeEvent
    ) -> None:
        document = self._text_documents.get(text_doc.uri)
        if document is None:  # a cell's edit that `ShardServer` could not see before (none known)
            return
        document.apply_change(change)
        document.version = text_doc.version
