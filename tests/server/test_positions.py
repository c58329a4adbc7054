"""Positions sent to the client are pygls's own, computed faster (`shardls.server.positions`):
random lines of ASCII, accents, astral characters and lone surrogates, in every encoding."""

from __future__ import annotations

import random

import pytest
from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from shardls.server.positions import to_client

CHARACTERS = ["a", " ", "é", "€", "𝓍", "😀", "\ud800", "\t"]


@pytest.mark.parametrize(
    "encoding",
    [
        types.PositionEncodingKind.Utf8,
        types.PositionEncodingKind.Utf16,
        types.PositionEncodingKind.Utf32,
        "x",
    ],
)
@pytest.mark.parametrize("seed", range(5))
def test_positions_are_pygls_positions(encoding: str, seed: int) -> None:
    rng = random.Random(seed)
    codec = PositionCodec(encoding)
    lines = ["".join(rng.choice(CHARACTERS) for _ in range(rng.randrange(12))) + "\n" for _ in range(8)]
    for _ in range(300):
        line, column = rng.randrange(len(lines) + 2), rng.randrange(16)
        expected = codec.position_to_client_units(lines, types.Position(line, column))
        assert to_client(codec, lines, line, column) == expected
