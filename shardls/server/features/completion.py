"""Completion of axis names inside the strings of a spec: `P("|")`, `(None, "|")` in
`with_partitioning`, `sharding=`/`out_sharding=`, shard_map specs and collectives.

Mesh axes come first (the mesh of the site at the cursor before the file's others), each with
its size and mesh in the detail; then the logical names of the file's rule tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types

from shardls.server.guard import handler
from shardls.server.strings import StringLiteral, literal_at, string_literals
from shardls.server.view import View

if TYPE_CHECKING:
    from shardls.server.server import ShardServer

_EMPTY = types.CompletionList(is_incomplete=False, items=[])


def register(server: ShardServer) -> None:
    @handler(
        server, types.TEXT_DOCUMENT_COMPLETION, _EMPTY, types.CompletionOptions(trigger_characters=['"', "'"])
    )
    async def complete(params: types.CompletionParams) -> types.CompletionList:
        view = await server.view(params.text_document.uri)
        if view is None:
            return _EMPTY
        line, column = view.offset(params.position)
        literal = literal_at(view.unit.lines, line, column)
        place = view.range(literal.content) if literal is not None and literal.in_spec else None
        if literal is None or place is None:
            return _EMPTY
        items = _axis_items(view, line, column, place)
        items += _logical_items(view.unit.lines, place, {item.label for item in items})
        return types.CompletionList(is_incomplete=False, items=items)


def _axis_items(view: View, line: int, column: int, place: types.Range) -> list[types.CompletionItem]:
    items: dict[str, types.CompletionItem] = {}
    for rank, fact in enumerate(view.meshes_near(line, column)):
        for name, size in zip(fact.mesh.axis_names, fact.mesh.axis_sizes):
            items.setdefault(
                name,
                types.CompletionItem(
                    name,
                    kind=types.CompletionItemKind.EnumMember,
                    detail=f"mesh axis, size {size} of {fact.mesh.describe()}",
                    documentation=fact.source,
                    sort_text=f"0{rank:03d}{name}",
                    text_edit=types.TextEdit(place, name),
                ),
            )
    return list(items.values())


def _logical_items(lines: Sequence[str], place: types.Range, taken: set[str]) -> list[types.CompletionItem]:
    return [
        types.CompletionItem(
            name,
            kind=types.CompletionItemKind.Variable,
            detail=f"logical axis → {target}" if target else "logical axis",
            sort_text=f"1{name}",
            text_edit=types.TextEdit(place, name),
        )
        for name, target in logical_names(lines).items()
        if name not in taken
    ]


def logical_names(lines: Sequence[str]) -> dict[str, str | None]:
    """Logical axis names of the rule tables written in the file, e.g. `("embed", "model")` inside
    `nnx.logical_axis_rules(...)` or an assignment to `LOGICAL_RULES`, with the mesh axis each
    maps to when it is one string."""
    literals = string_literals(lines)
    by_bracket: dict[int, list[StringLiteral]] = {}
    for literal in literals:
        by_bracket.setdefault(literal.bracket, []).append(literal)
    names: dict[str, str | None] = {}
    for literal in literals:
        if literal.bracket < 0 or literal.index != 0 or not any("rules" in h.lower() for h in literal.heads):
            continue
        target = next((other.value for other in by_bracket[literal.bracket] if other.index == 1), None)
        names.setdefault(literal.value, target)
    return names
