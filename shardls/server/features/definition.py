"""Go to definition on an axis-name string: the mesh constructor that defines the axis (the
axis' own string inside it when it is written there), in this file or the one it imports."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from shardls.analysis.facts import MeshFact
from shardls.server.guard import handler
from shardls.server.strings import literal_at, string_literals
from shardls.server.view import View

if TYPE_CHECKING:
    from shardls.server.server import ShardServer


def register(server: ShardServer) -> None:
    @handler(server, types.TEXT_DOCUMENT_DEFINITION, [])
    async def definition(params: types.DefinitionParams) -> list[types.Location]:
        view = await server.view(params.text_document.uri)
        if view is None:
            return []
        line, column = view.offset(params.position)
        literal = literal_at(view.unit.lines, line, column)
        if literal is None:
            return []
        places = [
            _definition(view, fact, literal.value)
            for fact in view.meshes_with_axis(literal.value, line, column)
        ]
        return [place for place in places if place is not None]


def _definition(view: View, fact: MeshFact, axis: str) -> types.Location | None:
    span = fact.span
    if span is None:  # a mesh from a setting or a pragma is written nowhere
        return None
    lines = view.unit.lines if view.in_this_file(fact.path) else view.lines_of(fact.path or "")
    named = [
        literal.span
        for literal in string_literals((lines or ())[: span.end_line + 1])
        if literal.value == axis and span.contains(literal.span.line, literal.span.column)
    ]
    return view.location(named[0] if named else span, fact.path)
