"""Diagnostics as the JSON text sent for them, made once per diagnostic and reused.

pygls sends a notification by converting its lsprotocol objects to JSON with cattrs and then
writing the whole message with `json.dumps`, every time; a file's diagnostics are published
again after every edit, and almost all of them are the very objects the analysis kept from
before (its per-segment cache). So each diagnostic is converted once (to lsprotocol, then by
pygls's own converter, so the JSON is what pygls would send) and written to JSON text once, and
that text is reused while the diagnostic and the lines its positions are computed from are the
same; the notification is joined from those texts (writing 1,270 diagnostics with `json.dumps`
took longer than analysing the edit).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol

from shardls.analysis.facts import Diagnostic, Span
from shardls.analysis.text_diff import LineEdit
from shardls.server.units import Unit
from shardls.server.view import same_file

logger = logging.getLogger("shardls.server")

Json = Any
"""What `json` writes: dicts, lists, strings, numbers, None."""

_Placement = tuple[tuple[str, int, str | None, str | None], ...] | None
"""What the client positions of a diagnostic are computed from: for each of its spans, the
document (cell) it lies in, that document's first line in the unit and the text of its first and
last lines. None when a span lies in another file (its text is read anew each time)."""


def placement(unit: Unit, diagnostic: Diagnostic) -> _Placement:
    spans: list[Span] = [diagnostic.span]
    for item in diagnostic.related:
        if item.path is not None and not same_file(item.path, unit.path):
            return None
        spans.append(item.span)
    placed = []
    for span in spans:
        part = unit.part_at(span.line)
        placed.append(
            (part.uri, part.first_line, _line(unit.lines, span.line), _line(unit.lines, span.end_line))
        )
    return tuple(placed)


def _line(lines: Sequence[str], number: int) -> str | None:
    return lines[number] if 0 <= number < len(lines) else None


class Serialised:
    """The JSON text of one unit's diagnostics at its last publish, by diagnostic."""

    def __init__(self) -> None:
        self._made: dict[int, _Made] = {}
        self._serial: int | None = None
        """The `Unit.serial` of the unit last published."""

    def texts(
        self, unit: Unit, diagnostics: Sequence[Diagnostic], convert: Callable[[Diagnostic], Json]
    ) -> list[str]:
        """The JSON text of each diagnostic, reusing last time's where nothing it rests on
        changed; only these are kept (the entries hold their diagnostics, so no id is reused
        meanwhile).

        When the unit is the one last published edited once (`Unit.edit`), a diagnostic kept
        from then whose lines the edit left where they were is reused without computing its
        placement again: comparing the placement of each of a 20k-line file's 1,270
        diagnostics on every edit cost more than the edit's analysis."""
        edit = unit.edit if self._serial is not None and unit.previous == self._serial else None
        made: dict[int, _Made] = {}
        found = []
        for diagnostic in diagnostics:
            before = self._made.get(id(diagnostic))
            if before is not None and before[0] is diagnostic and edit is not None and _left(before, edit):
                made[id(diagnostic)] = before
                found.append(before[2])
                continue
            where = placement(unit, diagnostic)
            if before is not None and before[0] is diagnostic and where is not None and before[1] == where:
                text = before[2]
            else:
                text = json.dumps(convert(diagnostic))
            made[id(diagnostic)] = (diagnostic, where, text, _lines_of(diagnostic))
            found.append(text)
        self._made = made
        self._serial = unit.serial
        return found


_Made = tuple[Diagnostic, _Placement, str, tuple[tuple[int, int], ...]]
"""A diagnostic, its placement, its JSON text, and the first and last line of each of its spans."""


def _lines_of(diagnostic: Diagnostic) -> tuple[tuple[int, int], ...]:
    spans = (diagnostic.span, *(item.span for item in diagnostic.related))
    return tuple((span.line, span.end_line) for span in spans)


def _left(made: _Made, edit: LineEdit) -> bool:
    """Whether the edit left the lines the diagnostic's placement was computed from where they
    were, as they were: each span above the edited lines, or below them when the edit kept the
    number of lines (a placement in another file is computed each time). Each span on its own:
    most diagnostics name a mesh defined near the top of the file."""
    if made[1] is None:
        return False
    first, last, moved = edit.first, edit.old_last, edit.delta
    return all(end < first or (not moved and line > last) for line, end in made[3])


def publish(protocol: LanguageServerProtocol, uri: str, diagnostics: list[str], version: int | None) -> None:
    """textDocument/publishDiagnostics with each diagnostic already in JSON text: the message is
    joined from them and framed as pygls frames it (`_send_data`), without cattrs or `json`."""
    if protocol.writer is None:
        return
    version_text = "" if version is None else f', "version": {json.dumps(version)}'
    body = (
        f'{{"jsonrpc": "2.0", "method": "{types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS}", '
        f'"params": {{"uri": {json.dumps(uri)}, "diagnostics": [{", ".join(diagnostics)}]{version_text}}}}}'
    )
    data = body
    if protocol._include_headers:
        data = f"Content-Length: {len(body)}\r\nContent-Type: {protocol.CONTENT_TYPE}; charset={protocol.CHARSET}\r\n\r\n{body}"
    try:
        written = protocol.writer.write(data.encode(protocol.CHARSET))
    except BrokenPipeError:
        logger.error("Connection with the client lost: the diagnostics of %s were not sent", uri)
        return
    if inspect.isawaitable(written):
        asyncio.ensure_future(written)


def to_json(protocol: LanguageServerProtocol, value: object) -> Json:
    """An lsprotocol object as pygls would send it."""
    return protocol._converter.unstructure(value)
