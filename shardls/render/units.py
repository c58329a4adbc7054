"""Byte counts as people read them."""

from __future__ import annotations

_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def human_bytes(count: int) -> str:
    """`2.0 MiB (2,097,152 bytes)`; below 1 KiB just `96 bytes`.

    Binary units, because device memory is sized in them; the exact count follows so that
    numbers can be compared with `nbytes` without rounding doubts.
    """
    exact = f"{count:,} byte" + ("" if count == 1 else "s")
    value, unit = _scaled(count)
    return exact if unit is None else f"{value:.1f} {unit} ({exact})"


def short_bytes(count: int) -> str:
    """`256 B`, `2.0 MiB`: for one-line summaries, where the exact count would crowd the line."""
    value, unit = _scaled(count)
    return f"{count} B" if unit is None else f"{value:.1f} {unit}"


def _scaled(count: int) -> tuple[float, str | None]:
    """The count in the largest binary unit that keeps it at least 1 (None: plain bytes)."""
    value = float(count)
    unit = None
    for candidate in _UNITS:
        if round(value, 1) < 1024:
            break
        value /= 1024
        unit = candidate
    return value, unit
