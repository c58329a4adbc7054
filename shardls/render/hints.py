"""What to do about a diagnostic, in one line, from the numbers in its `data`.

The message says what is wrong; the hint proposes a change, so the command line's `help:` line
and the editor's hover can both show it. Codes without an obvious remedy have no hint.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

Data = Mapping[str, object]

_DEVICE_COUNT_HINT = (
    "if the device count is wrong, set it with `# shardls: device-count=N` in the file, "
    "--device-count N, or device-count in [tool.shardls]"
)


def diagnostic_hint(code: str, data: Data) -> str | None:
    hint = _HINTS.get(code)
    return None if hint is None else hint(data)


def _indivisible(data: Data) -> str | None:
    dim, nearest, alternatives = data.get("dim"), data.get("nearest"), data.get("alternatives")
    if not isinstance(nearest, list) or not isinstance(alternatives, list):
        return None
    choices = [
        f"({', '.join(map(repr, axes))})" if len(axes) > 1 else repr(axes[0]) for axes in alternatives if axes
    ]
    other = f"shard it over {' or '.join(choices[:3])} instead, " if choices else ""
    return (
        f"resize dimension {dim} to {' or '.join(map(str, nearest))}, {other}"
        "or leave it unsharded (None in the spec)"
    )


def _unknown_axis(data: Data) -> str | None:
    axis, suggestion = data.get("axis"), data.get("suggestion")
    return f"replace {axis!r} with {suggestion!r}" if suggestion else None


def _too_long(data: Data) -> str | None:
    length, rank = data.get("spec_length"), data.get("rank")
    if not isinstance(length, int) or not isinstance(rank, int):
        return None
    count = length - rank
    return (
        f"remove the last {count} entr{'y' if count == 1 else 'ies'} of the spec, or check the array's shape"
    )


_HINTS: dict[str, Callable[[Data], str | None]] = {
    "SH001": _indivisible,
    "SH002": _too_long,
    "SH003": lambda data: "a scalar takes P()",
    "SH005": _unknown_axis,
    "SH104": lambda data: _DEVICE_COUNT_HINT,
    "SH105": lambda data: _DEVICE_COUNT_HINT,
    "SH106": lambda data: _DEVICE_COUNT_HINT,
}
