"""How a parameter's copies are named: `layers[0..79]` for a full range, the indices when some
are missing, and `[*]` for copies whose indices are unknown (the row's count says how many)."""

from __future__ import annotations

import pytest

from shardls.memory.model import ParamPath


@pytest.mark.parametrize(
    ("copies", "compact"),
    [
        (("[0]", "[1]", "[2]"), "layers[0..2].kernel"),
        (("[0]", "[2]"), "layers[0,2].kernel"),
        (("[*]", "[*]", "[*]"), "layers[*].kernel"),
    ],
)
def test_copies_are_named_compactly(copies: tuple[str, ...], compact: str) -> None:
    path = ParamPath().under("kernel").under("layers", copies)
    assert path.compact() == compact
    assert path.count == len(copies)
