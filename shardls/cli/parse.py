"""Command-line text for shapes and counts (meshes: `shardls.meshtext`; specs: `spec_parse`).

Each parser raises ValueError with a message that says what was expected, so that argparse
(through `option_type`) shows it as one line.
"""

from __future__ import annotations

from shardls.meshtext import parse_int, split_items


def parse_shape(text: str) -> tuple[int, ...]:
    """`8,16`, `(8, 16)`, `[8, 16]`, `(8,)`; an empty text, `()` or `[]` is a scalar."""
    inner = text.strip()
    if inner[:1] + inner[-1:] in ("()", "[]"):
        inner = inner[1:-1]
    dims = tuple(parse_int(part, "a dimension") for part in split_items(inner))
    if any(n < 0 for n in dims):
        raise ValueError(f"dimensions cannot be negative: {text!r}")
    return dims


def parse_device_count(text: str) -> int:
    count = parse_int(text, "the device count")
    if count < 1:
        raise ValueError(f"the device count must be at least 1, got {count}")
    return count
