"""References of an axis name: the strings naming it where axes are defined or used (mesh
constructors, specs, sharding keywords, collectives, constants such as `MESH_AXES`), in the open
documents and the workspace's other Python files.

This is a textual search guided by where the strings are written, not an analysis of every
file: it must answer in a moment on a large repository.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import from_fs_path

from shardls.analysis.facts import Span
from shardls.files import decode_source_loosely, discover, read_workspace_file, source_lines
from shardls.server.guard import handler
from shardls.server.strings import MESH_HEADS, literal_at, string_literals
from shardls.server.view import same_file, to_range, unit_location

if TYPE_CHECKING:
    from shardls.server.server import ShardServer

MAX_FILES = 5000


def register(server: ShardServer) -> None:
    @handler(server, types.TEXT_DOCUMENT_REFERENCES, [])
    async def references(params: types.ReferenceParams) -> list[types.Location]:
        view = await server.view(params.text_document.uri)
        if view is None:
            return []
        line, column = view.offset(params.position)
        literal = literal_at(view.unit.lines, line, column)
        if literal is None or not (literal.names_axis or view.meshes_with_axis(literal.value, line, column)):
            return []
        axis, declarations = literal.value, params.context.include_declaration
        codec = view.codec
        units = server.units()
        found = [
            unit_location(codec, unit, span)
            for unit in units
            for span in axis_uses(unit.lines, axis, declarations)
        ]
        on_disk = await asyncio.to_thread(
            _disk_uses, server.roots, [unit.path for unit in units], axis, declarations
        )
        found += [
            types.Location(from_fs_path(path) or path, to_range(codec, lines, span))
            for path, lines, spans in on_disk
            for span in spans
        ]
        return found


def axis_uses(lines: Sequence[str], axis: str, declarations: bool) -> list[Span]:
    """Where the text names the axis; `declarations`: mesh constructors' own strings too."""
    return [
        literal.span
        for literal in string_literals(lines)
        if literal.value == axis
        and literal.names_axis
        and (declarations or not any(head in MESH_HEADS for head in literal.heads))
    ]


def _disk_uses(
    roots: Sequence[Path], open_paths: Sequence[str], axis: str, declarations: bool
) -> list[tuple[str, tuple[str, ...], list[Span]]]:
    """The uses in the workspace's Python files that are not open (those were searched already)."""
    found = []
    for path in discover(roots)[:MAX_FILES]:
        if path.suffix != ".py" or any(same_file(str(path), other) for other in open_paths):
            continue
        try:
            text = decode_source_loosely(read_workspace_file(path, roots))
        except OSError:
            continue
        if axis not in text:
            continue
        lines = source_lines(text)
        spans = axis_uses(lines, axis, declarations)
        if spans:
            found.append((str(path), lines, spans))
    return found
