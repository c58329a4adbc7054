"""Command-line text for meshes, shapes, axis types and counts (the spec has its own module).

Each parser raises ValueError with a message that says what was expected, so that argparse
(through `option_type`) shows it as one line.
"""

from __future__ import annotations

from shardls.core.mesh import AxisType


def parse_mesh_axes(text: str) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """`data=2,model=4` -> names and sizes. Sizes are not range-checked: the core reports
    zero, negative and `-1` sizes with its own codes."""
    names: list[str] = []
    sizes: list[int] = []
    for part in _items(text):
        name, equals, size = part.partition("=")
        if not equals or not name.strip():
            raise ValueError(f"expected name=size, such as data=2, but got {part!r} in {text!r}")
        names.append(name.strip())
        sizes.append(_int(size, f"the size of mesh axis {name.strip()!r}"))
    if not names:
        raise ValueError("the mesh needs at least one axis, such as data=2,model=4")
    return tuple(names), tuple(sizes)


def parse_axis_types(text: str) -> tuple[AxisType, ...]:
    """`explicit`, or one type per axis such as `explicit,auto` (case-insensitive)."""
    by_name = {t.value.lower(): t for t in AxisType}
    types = []
    for part in _items(text):
        if part.lower() not in by_name:
            raise ValueError(f"unknown axis type {part!r}; expected {', '.join(by_name)}")
        types.append(by_name[part.lower()])
    if not types:
        raise ValueError(f"expected an axis type ({', '.join(by_name)}) or a comma list of them")
    return tuple(types)


def parse_shape(text: str) -> tuple[int, ...]:
    """`8,16`, `(8, 16)`, `[8, 16]`, `(8,)`; an empty text, `()` or `[]` is a scalar."""
    inner = text.strip()
    if inner[:1] + inner[-1:] in ("()", "[]"):
        inner = inner[1:-1]
    dims = tuple(_int(part, "a dimension") for part in _items(inner))
    if any(n < 0 for n in dims):
        raise ValueError(f"dimensions cannot be negative: {text!r}")
    return dims


def parse_device_count(text: str) -> int:
    count = _int(text, "the device count")
    if count < 1:
        raise ValueError(f"the device count must be at least 1, got {count}")
    return count


def _items(text: str) -> list[str]:
    """Comma-separated items, stripped; one trailing comma is allowed (`8,` like Python's `(8,)`)."""
    parts = [part.strip() for part in text.split(",")]
    if parts[-1] == "":
        parts.pop()
    if "" in parts:
        raise ValueError(f"empty item in {text!r}")
    return parts


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what} must be an integer, got {text.strip()!r}") from None
