"""Python columns to the client's columns (UTF-16 unless the client chose otherwise), fast.

pygls's `PositionCodec.position_to_client_units` counts code units one character at a time
through three Python calls per character: converting the four positions of each of the 1,270
diagnostics of a 20k-line file took 0.35 s, most of a publish. An ASCII prefix (almost every
line of code) has as many code units as characters, and any other is counted by encoding it.
The results are pygls's, position for position (tests/server/test_positions.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec


def client_units(encoding: object, text: str) -> int:
    """The code units `text` takes in the client's position encoding (pygls's reading of it:
    UTF-8 and UTF-32 by name, anything else UTF-16)."""
    if text.isascii() or encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def to_client(codec: PositionCodec, lines: Sequence[str], line: int, column: int) -> types.Position:
    """`codec.position_to_client_units(lines, Position(line, column))`, without its per-character loop."""
    try:
        text = lines[line]
    except IndexError:
        return types.Position(len(lines), 0)
    return types.Position(line, client_units(codec.encoding, text[:column]))
