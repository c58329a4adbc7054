"""PartitionSpec with JAX's normalisation, keeping the user's spelling for display.

`P(('a',))` is `P('a')`, `P(())` and `P(None)` shard nothing, lists become tuples. Unlike JAX we
keep `original` so a hover can echo what the user typed.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


class _Unconstrained(enum.Enum):
    """`P.UNCONSTRAINED`: the compiler chooses; behaves as None for shapes."""

    UNCONSTRAINED = "UNCONSTRAINED"

    def __repr__(self) -> str:
        return "P.UNCONSTRAINED"


UNCONSTRAINED = _Unconstrained.UNCONSTRAINED

AxisItem = str | None
"""One name inside an entry. None inside a tuple is kept because JAX rejects it (and we report it)."""

SpecEntry = AxisItem | tuple[AxisItem, ...] | _Unconstrained
RawEntry = AxisItem | Sequence[AxisItem] | _Unconstrained


def normalize_entry(entry: RawEntry) -> SpecEntry:
    """JAX's canonical form of one entry: `()` -> None, `('a',)` -> 'a', lists -> tuples."""
    if entry is None or entry is UNCONSTRAINED or isinstance(entry, str):
        return entry
    items = tuple(entry)
    if not items:
        return None
    if len(items) == 1:
        return items[0]
    return items


def entry_axes(entry: SpecEntry) -> tuple[AxisItem, ...]:
    """The axis names an entry shards over, most significant first."""
    if entry is None or entry is UNCONSTRAINED:
        return ()
    if isinstance(entry, tuple):
        return entry
    return (entry,)


@dataclass(frozen=True)
class PartitionSpec:
    entries: tuple[SpecEntry, ...]
    unreduced: frozenset[str] = frozenset()
    reduced: frozenset[str] = frozenset()
    original: str | None = None
    entry_names: tuple[tuple[str, ...], ...] = field(init=False, repr=False, compare=False, hash=False)
    """Per entry, the axis names it splits over (for the calculator's fast path)."""
    plain: bool = field(init=False, repr=False, compare=False, hash=False)
    """No repeated axis, no None inside a tuple, no UNCONSTRAINED, no unreduced/reduced axes."""
    _hash: int = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        names = tuple(tuple(a for a in entry_axes(e) if isinstance(a, str)) for e in self.entries)
        object.__setattr__(self, "entry_names", names)
        flat = [a for entry in names for a in entry]
        plain = (
            not self.unreduced
            and not self.reduced
            and len(flat) == len(set(flat))
            and sum(len(entry_axes(e)) for e in self.entries) == len(flat)
            and UNCONSTRAINED not in self.entries
        )
        object.__setattr__(self, "plain", plain)
        object.__setattr__(self, "_hash", hash((self.entries, self.unreduced, self.reduced, self.original)))

    def __hash__(self) -> int:
        return self._hash

    @classmethod
    def of(
        cls,
        *entries: RawEntry,
        unreduced: Iterable[str] = (),
        reduced: Iterable[str] = (),
        original: str | None = None,
    ) -> PartitionSpec:
        return cls(
            tuple(normalize_entry(e) for e in entries),
            frozenset(unreduced),
            frozenset(reduced),
            original,
        )

    def __len__(self) -> int:
        return len(self.entries)

    def used_axes(self) -> tuple[AxisItem, ...]:
        return tuple(axis for entry in self.entries for axis in entry_axes(entry))

    def padded(self, rank: int) -> tuple[SpecEntry, ...]:
        """Entries for each of `rank` dimensions; short specs are padded with None as JAX does."""
        return self.entries[:rank] + (None,) * (rank - len(self.entries))

    def canonical(self) -> str:
        """JAX's repr of the normalised spec, e.g. `P('data', ('fsdp', 'tp'), None)`."""
        parts = [_entry_repr(e) for e in self.entries]
        if self.unreduced:
            parts.append("unreduced={" + ", ".join(repr(a) for a in sorted(self.unreduced)) + "}")
        if self.reduced:
            parts.append("reduced={" + ", ".join(repr(a) for a in sorted(self.reduced)) + "}")
        return "P(" + ", ".join(parts) + ")"

    def display(self) -> str:
        return self.original or self.canonical()

    def to_json(self) -> list[object]:
        """Entries as JSON: null, a name, or a list of names (UNCONSTRAINED as its name)."""
        out: list[object] = []
        for entry in self.entries:
            if entry is UNCONSTRAINED:
                out.append("UNCONSTRAINED")
            elif isinstance(entry, tuple):
                out.append(list(entry))
            else:
                out.append(entry)
        return out


def _entry_repr(entry: SpecEntry) -> str:
    if entry is UNCONSTRAINED:
        return "P.UNCONSTRAINED"
    if isinstance(entry, tuple):
        return "(" + ", ".join(repr(a) for a in entry) + ")"
    return repr(entry)
