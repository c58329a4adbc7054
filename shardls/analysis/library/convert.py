"""Reading library arguments out of abstract values: shapes, dtypes, specs, axis types."""

from __future__ import annotations

from shardls.analysis.values import (
    ArrayV,
    Choice,
    Const,
    DTypeV,
    Ref,
    Seq,
    SetV,
    ShardingV,
    SpecV,
    UnknownInt,
    Value,
    as_int,
    as_str,
)
from shardls.core import UNCONSTRAINED, AxisType, DType, PartitionSpec, parse_dtype
from shardls.core.spec import RawEntry

_AXIS_TYPES = {"Auto": AxisType.AUTO, "Explicit": AxisType.EXPLICIT, "Manual": AxisType.MANUAL}


def shape_of(value: Value | None) -> tuple[Value, ...] | None:
    """`(8, 16)`, `[8, 16]`, a bare int (1-D, its value known or not), or an array's shape."""
    if value is None:
        return None
    if isinstance(value, Seq):
        return value.items
    if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool):
        return (value,)
    if isinstance(value, ArrayV):
        return value.shape
    if isinstance(value, UnknownInt):
        return (value,)
    return None


def python_scalar_array(value: Value, x64: bool = False) -> Value:
    """A Python bool, int or float where JAX takes an array (an argument of a `shard_map`ped
    function, a loop carry): the 0-d array JAX makes of it, of the (weak) dtype it gives it.
    Anything else is returned as it is."""
    if not isinstance(value, Const) or type(value.value) not in (bool, int, float):
        return value
    if isinstance(value.value, bool):
        name = "bool"
    else:
        name = ("int" if isinstance(value.value, int) else "float") + ("64" if x64 else "32")
    return ArrayV((), parse_dtype(name, x64=x64))


def dtype_of(value: Value | None, x64: bool = False) -> DType | None:
    if isinstance(value, DTypeV):
        return value.dtype
    name = None
    if isinstance(value, Ref):
        name = value.qualname.rsplit(".", 1)[-1]
    elif isinstance(value, Const) and isinstance(value.value, str):
        name = value.value
    if name is None:
        return None
    try:
        return parse_dtype(name, x64=x64)
    except ValueError:
        return None


def axis_types_of(value: Value | None) -> tuple[AxisType, ...] | None:
    """`AxisType.Explicit`, `(AxisType.Auto,) * 2`; None when absent or unreadable."""
    if value is None:
        return None
    if isinstance(value, Ref):
        # A bare AxisType is one type: JAX rejects it for a mesh of several axes (SH108).
        kind = _AXIS_TYPES.get(value.qualname.rsplit(".", 1)[-1])
        return (kind,) if kind is not None else None
    if isinstance(value, Seq):
        kinds = [axis_types_of(item) for item in value.items]
        if all(k is not None for k in kinds):
            return tuple(k[0] for k in kinds if k is not None)
    return None


class _Unresolved:
    """An entry whose value is unknown: shown as `?`, contributes no sharding."""


UNRESOLVED = _Unresolved()


def spec_entry(value: Value) -> RawEntry | _Unresolved:
    if isinstance(value, Const):
        if value.value is None:
            return None
        if isinstance(value.value, str):
            return value.value
        return repr(value.value)
    if isinstance(value, Ref) and value.qualname.endswith("UNCONSTRAINED"):
        return UNCONSTRAINED
    if isinstance(value, Seq):
        items: list[str | None] = []
        for item in value.items:
            entry = spec_entry(item)
            if isinstance(entry, _Unresolved) or entry is UNCONSTRAINED or isinstance(entry, tuple):
                return UNRESOLVED
            items.append(entry)  # type: ignore[arg-type]
        return tuple(items)
    if isinstance(value, Ref) and value.qualname == "builtins.Ellipsis":
        return "..."
    return UNRESOLVED


def spec_from_entries(
    entries: tuple[Value, ...],
    unreduced: Value | None = None,
    reduced: Value | None = None,
    original: str | None = None,
) -> SpecV:
    raw: list[RawEntry] = []
    unknown: list[int] = []
    for index, value in enumerate(entries):
        entry = spec_entry(value)
        if isinstance(entry, _Unresolved):
            unknown.append(index)
            raw.append(None)
        else:
            raw.append(entry)
    spec = PartitionSpec.of(*raw, unreduced=_names(unreduced), reduced=_names(reduced), original=original)
    return SpecV(spec, unknown_entries=tuple(unknown))


def _names(value: Value | None) -> tuple[str, ...]:
    if isinstance(value, (SetV, Seq)):
        return tuple(n for n in (as_str(item) for item in value.items) if n is not None)
    return ()


def spec_of(value: Value | None) -> SpecV | None:
    """A spec from a P, a NamedSharding, or a tuple of names (as Flax annotations allow)."""
    if isinstance(value, SpecV):
        return value
    if isinstance(value, ShardingV):
        return value.spec
    if isinstance(value, Seq):
        return spec_from_entries(value.items)
    return None


def sharding_of(value: Value | None) -> ShardingV | None:
    if isinstance(value, ShardingV):
        return value
    if isinstance(value, SpecV):
        return ShardingV(value, None, bare=True)
    return None


def first_int(value: Value | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, Choice):
        return None
    return as_int(value)
