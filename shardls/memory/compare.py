"""Static result against exact mode's: every parameter whose path, shape, dtype, spec or
per-device shape differs, and the totals."""

from __future__ import annotations

from shardls.core import PartitionSpec
from shardls.memory.model import ModelMemory

Row = tuple[str, tuple[object, ...], str, str, tuple[object, ...]]


def mismatches(static: ModelMemory, exact: ModelMemory) -> list[str]:
    """One line per difference (empty when they agree exactly)."""
    mine, theirs = _rows(static), _rows(exact)
    found = [f"{path}: only in the static result" for path in mine if path not in theirs]
    found += [f"{path}: only in exact mode" for path in theirs if path not in mine]
    names = ("shape", "dtype", "spec", "per-device shape")
    for path, row in mine.items():
        other = theirs.get(path)
        if other is None:
            continue
        for name, a, b in zip(names, row[1:], other[1:]):
            if a != b:
                found.append(f"{path}: {name} static {a} vs exact {b}")
    for name in ("param_count", "total_bytes", "max_bytes_per_device"):
        a, b = getattr(static, name), getattr(exact, name)
        if a != b:
            found.append(f"{name}: static {a:,} vs exact {b:,}")
    return found


def _rows(model: ModelMemory) -> dict[str, Row]:
    rows: dict[str, Row] = {}
    for param in model.params:
        for path in param.paths():
            spec = _spec_text(param.spec)
            rows[path] = (path, param.shape, param.dtype.name, spec, param.shard_shape)
    return rows


def _spec_text(spec: PartitionSpec | None) -> str:
    """Trailing Nones do not change a layout: `P('data', None)` is `P('data')`."""
    entries = list(spec.entries) if spec is not None else []
    while entries and entries[-1] is None:
        entries.pop()
    return PartitionSpec.of(*entries).display()
