"""Binary byte units."""

from __future__ import annotations

import pytest

from shardls.render.units import human_bytes


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (0, "0 bytes"),
        (1, "1 byte"),
        (1023, "1,023 bytes"),
        (1024, "1.0 KiB (1,024 bytes)"),
        (1536, "1.5 KiB (1,536 bytes)"),
        (2_097_152, "2.0 MiB (2,097,152 bytes)"),
        (1_048_575, "1.0 MiB (1,048,575 bytes)"),  # 1023.999 KiB would round to "1024.0 KiB"
        (80 * 2**30, "80.0 GiB (85,899,345,920 bytes)"),
        (3 * 2**40, "3.0 TiB (3,298,534,883,328 bytes)"),
    ],
)
def test_human_bytes(count: int, text: str) -> None:
    assert human_bytes(count) == text
