"""Binary byte units."""

from __future__ import annotations

import pytest

from shardls.core import FLOAT32, PartitionSpec
from shardls.memory.figures import summary
from shardls.memory.model import ModelMemory, ParamMemory
from shardls.render.units import human_bytes, short_bytes


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


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (96, "96 B"),
        (1024, "1.0 KiB"),
        (16 * 2**30, "16.0 GiB"),
        (17_179_869_184 + 2**29, "16.5 GiB"),
        (137_953_296_384, "128.5 GiB"),
    ],
)
def test_short_bytes(count: int, text: str) -> None:
    assert short_bytes(count) == text


def test_memory_figures_speak_the_units_of_the_hover() -> None:
    """The report, the code lens and SH213 once wrote `16.8 MB` where the hover wrote `16.0 MiB`
    for the same bytes; every byte count now goes through one function."""
    kernel = ParamMemory("w", (4096, 4096), FLOAT32, PartitionSpec.of("fsdp", None), (512, 4096))
    model = ModelMemory("Net", "Net", "net.py", 0, (kernel,), "fsdp=8")

    assert summary(model) == "params 16.8 M · 64.0 MiB f32 · 8.0 MiB / device (fsdp=8)"
