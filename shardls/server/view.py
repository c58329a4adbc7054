"""An analysed unit seen from the document a request names, and the position arithmetic between
them.

The analysis counts lines over the whole unit (a notebook's cells joined) and columns in Python
characters; LSP counts lines per document (per cell) and columns in the negotiated encoding
(UTF-16 unless the client offers another). Every conversion happens here, with the unit's own
lines, so a feature never does position arithmetic itself.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lsprotocol import types
from pygls.uris import from_fs_path
from pygls.workspace.position_codec import PositionCodec

from shardls.analysis.facts import Diagnostic, FileAnalysis, MeshFact, Site, Span
from shardls.server.analyses import Result
from shardls.server.positions import to_client
from shardls.server.units import Part, Unit

LinesOf = Callable[[str], Sequence[str] | None]
"""The current lines of another file (the editor's text when open, else the disk's)."""


@dataclass(frozen=True)
class View:
    result: Result
    uri: str
    """The document the request names: the file, or one cell of the notebook."""
    codec: PositionCodec
    lines_of: LinesOf

    @property
    def unit(self) -> Unit:
        return self.result.unit

    @property
    def analysis(self) -> FileAnalysis:
        return self.result.analysis

    @property
    def part(self) -> Part:
        """The requested document's part (for a notebook's own URI, its first cell)."""
        part = self.unit.part(self.uri)
        return part if part is not None else self.unit.parts[0]

    # -- from the client ------------------------------------------------------------------

    def offset(self, position: types.Position) -> tuple[int, int]:
        """A position in this document as (unit line, Python column)."""
        part = self.part
        line = part.first_line + max(0, min(position.line, part.line_count - 1))
        at = self.codec.position_from_client_units(self.unit.lines, types.Position(line, position.character))
        return at.line, at.character

    def unit_range(self, range_: types.Range) -> Span:
        start, end = self.offset(range_.start), self.offset(range_.end)
        return Span(*start, *end)

    # -- to the client --------------------------------------------------------------------

    def range(self, span: Span) -> types.Range | None:
        """The span as a range of this document; None when it lies in another cell."""
        part = self.unit.part_at(span.line)
        return to_range(self.codec, self.unit.lines, span, part.first_line) if part.uri == self.uri else None

    def location(self, span: Span, path: str | None = None) -> types.Location | None:
        """Where a span of this unit (path None or the unit's) or of another file is."""
        if path is None or same_file(path, self.unit.path):
            return unit_location(self.codec, self.unit, span)
        lines = self.lines_of(path)
        return (
            None
            if lines is None
            else types.Location(from_fs_path(path) or path, to_range(self.codec, lines, span))
        )

    # -- what is where --------------------------------------------------------------------

    def in_this_file(self, path: str | None) -> bool:
        return path is None or same_file(path, self.unit.path)

    def sites_at(self, line: int, column: int) -> list[Site]:
        """The sites written at the cursor (their call or their spec), the innermost first."""
        return [site for _, site in self.places_at(line, column)]

    def places_at(self, line: int, column: int) -> list[tuple[Span, Site]]:
        """`sites_at`, each with the span (call or spec) that holds the cursor."""
        found = [
            (span, site)
            for site in self.analysis.sites_on(line)
            if (span := self.matched_span(site, line, column)) is not None and self.in_this_file(site.path)
        ]
        return sorted(found, key=lambda pair: _size(pair[0]))

    def matched_span(self, site: Site, line: int, column: int) -> Span | None:
        """The smaller of the site's spec and its call that holds the cursor."""
        spans = [
            span for span in (site.spec_span, site.span) if span is not None and span.contains(line, column)
        ]
        return min(spans, key=_size, default=None)

    def diagnostics_in(self, span: Span) -> list[Diagnostic]:
        candidates = self.analysis.diagnostics_on(span.line, span.end_line)
        return [d for d in candidates if _overlap(d.span, span)]

    def meshes(self) -> list[MeshFact]:
        """Every mesh the unit defines or its sites use, each once, definitions first."""
        return list(self.analysis.all_meshes)

    def meshes_near(self, line: int, column: int) -> list[MeshFact]:
        """Every mesh, the mesh of the site at the cursor first."""
        at_cursor = [site.mesh for site in self.sites_at(line, column) if site.mesh]
        if not at_cursor:
            return self.meshes()
        return _unique([*at_cursor, *self.analysis.all_meshes])

    def meshes_with_axis(self, axis: str, line: int, column: int) -> list[MeshFact]:
        return [fact for fact in self.meshes_near(line, column) if axis in fact.mesh.axis_names]


def _unique(facts: Sequence[MeshFact]) -> list[MeshFact]:
    unique: dict[object, MeshFact] = {}
    for fact in facts:
        unique.setdefault((fact.mesh, fact.span, fact.path), fact)
    return list(unique.values())


def _overlap(a: Span, b: Span) -> bool:
    return (a.line, a.column) <= (b.end_line, b.end_column) and (b.line, b.column) <= (
        a.end_line,
        a.end_column,
    )


def _size(span: Span) -> tuple[int, int]:
    return span.end_line - span.line, span.end_column - span.column


def unit_location(codec: PositionCodec, unit: Unit, span: Span) -> types.Location:
    """A span of a unit in the document (file or cell) that holds it."""
    part = unit.part_at(span.line)
    return types.Location(part.uri, to_range(codec, unit.lines, span, part.first_line))


def to_range(codec: PositionCodec, lines: Sequence[str], span: Span, first_line: int = 0) -> types.Range:
    """A span over `lines` as a client range, lines counted from `first_line` (a cell's start)."""
    start = to_client(codec, lines, span.line, span.column)
    end = to_client(codec, lines, span.end_line, span.end_column)
    return types.Range(
        types.Position(start.line - first_line, start.character),
        types.Position(end.line - first_line, end.character),
    )


@functools.lru_cache(maxsize=4096)
def same_file(a: str, b: str) -> bool:
    """Cached: hovers ask it for many sites, and `abspath` costs a system call each time."""
    return a == b or os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))
