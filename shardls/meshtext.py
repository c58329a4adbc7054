"""The one syntax for a mesh a person types: `data=2,model=4`, optionally `data=2:explicit`.

The `--mesh` flags, `default-mesh` in the configuration file and the `# shardls: mesh ...`
pragma all read it here, so a mesh written in one place can be pasted into another. Axes are
separated by commas or whitespace; spaces around `=` and `:` are allowed. Sizes are not
range-checked: the core reports zero, negative and `-1` sizes with its own codes, and a `-1`
is filled from the device count. Every parser raises ValueError with a message that says what
was expected.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from shardls.core.mesh import AxisType, Mesh

_AROUND_OPERATORS = re.compile(r"\s*([=:])\s*")
_AXIS_TYPES = {t.value.lower(): t for t in AxisType}


def parse_mesh_text(text: str) -> Mesh:
    """`data=2,model=4`, `data=2 model=4` or `data=2:explicit,model=4`; untyped axes are Auto."""
    compact = _AROUND_OPERATORS.sub(r"\1", text)
    axes = [_axis(*_name_and_value(part, text)) for item in split_items(compact) for part in item.split()]
    return _mesh(axes)


def mesh_from_table(table: Mapping[str, object]) -> Mesh:
    """The table form of a configuration file, `{data = 2, model = "4:explicit"}`, in key order."""
    return _mesh(
        [_axis(name, str(value) if isinstance(value, int) else value) for name, value in table.items()]
    )


def parse_axis_types(text: str) -> tuple[AxisType, ...]:
    """`explicit`, or one type per axis such as `explicit,auto` (case-insensitive)."""
    types = tuple(parse_axis_type(part) for part in split_items(text)) if text.strip() else ()
    if not types:
        raise ValueError(f"expected an axis type ({', '.join(_AXIS_TYPES)}) or a comma list of them")
    return types


def parse_axis_type(text: str) -> AxisType:
    kind = _AXIS_TYPES.get(text.strip().lower())
    if kind is None:
        raise ValueError(f"unknown axis type {text.strip()!r}; expected {', '.join(_AXIS_TYPES)}")
    return kind


def with_axis_types(mesh: Mesh, types: tuple[AxisType, ...]) -> Mesh:
    """`mesh` with one type for every axis, or exactly one per axis."""
    names = mesh.axis_names
    if len(types) == 1:
        types = types * len(names)
    if len(types) != len(names):
        raise ValueError(
            f"{len(types)} types for the {len(names)} mesh axes {', '.join(names)}; "
            "give one type for all axes or one per axis"
        )
    return replace(mesh, axis_types=types)


def split_items(text: str) -> list[str]:
    """Comma-separated items, stripped; one trailing comma is allowed (`8,` like Python's `(8,)`)."""
    parts = [part.strip() for part in text.split(",")]
    if parts[-1] == "":
        parts.pop()
    if "" in parts:
        raise ValueError(f"empty item in {text!r}")
    return parts


def parse_int(text: str, what: str) -> int:
    """`int(text)` with a message naming `what` the integer is for."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{what} must be an integer, got {text.strip()!r}") from None


def _name_and_value(part: str, text: str) -> tuple[str, object]:
    name, equals, value = part.partition("=")
    if not equals or not name:
        raise ValueError(f"expected name=size, such as data=2, but got {part!r} in {text!r}")
    return name, value


def _axis(name: str, value: object) -> tuple[str, int, AxisType | None]:
    """One axis from its name and `size` or `size:type` text."""
    if not isinstance(value, str):
        raise ValueError(f"the size of mesh axis {name!r} must be an integer or 'size:type', got {value!r}")
    size, colon, kind = value.partition(":")
    return name, parse_int(size, f"the size of mesh axis {name!r}"), parse_axis_type(kind) if colon else None


def _mesh(axes: list[tuple[str, int, AxisType | None]]) -> Mesh:
    if not axes:
        raise ValueError("the mesh needs at least one axis, such as data=2,model=4")
    return Mesh(
        tuple(name for name, _, _ in axes),
        tuple(size for _, size, _ in axes),
        tuple(kind or AxisType.AUTO for _, _, kind in axes),
    )
