"""Lists of modules as `__init__` fills them (`nnx.List()`, then `.append`, `.extend`, `+=`, a
loop): kept as items with their indices, so that a loop can repeat what its body added."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TypeAlias

from shardls.memory.model import ParamPath
from shardls.memory.raw_param import RawParam

MAX_ITEMS = 100_000
"""Copies of one item a loop may make in a list (nested loops multiply); beyond, one is counted."""

Label = int | None
"""A list index; None when it is not known (an earlier part of the list has an unknown length)."""


@dataclass
class _Item:
    """List items that hold the same modules: their indices, and the parameters of one of them
    with paths relative to the item (`up.kernel`)."""

    labels: tuple[Label, ...]
    params: list[RawParam]

    def rendered(self) -> list[RawParam]:
        return [p.under("", [label_text(label) for label in self.labels]) for p in self.params]


@dataclass
class ModuleList:
    """A list of modules as `__init__` builds it (`nnx.List()`, then `.append`, `.extend`, `+=`):
    kept as items so that a loop can repeat the ones its body added."""

    items: list[_Item] = field(default_factory=list)
    length: int | None = 0
    plain: bool = False
    """A Python list or tuple, not an `nnx.List`: Flax 0.12 rejects one holding modules as an
    attribute of a (pytree) module."""

    @classmethod
    def of(cls, params: list[RawParam], length: int | None, plain: bool) -> ModuleList:
        """A list expression's parameters, whose paths start with the item index (`[3].up.kernel`)."""
        return cls(_as_items(params), length if length is not None else inferred_length(params), plain)

    def params(self) -> list[RawParam]:
        return [p for item in self.items for p in item.rendered()]

    def append(self, params: list[RawParam]) -> None:
        self.items.append(_Item((self.length,), params))
        self.length = None if self.length is None else self.length + 1

    def extend(self, params: list[RawParam], count: int | None) -> None:
        base = self.length
        for item in _as_items(params):
            labels = tuple(None if base is None or label is None else base + label for label in item.labels)
            self.items.append(_Item(labels, item.params))
        if count is None:
            count = inferred_length(params)
        self.length = None if base is None or count is None else base + count

    def mark(self) -> tuple[int, int | None]:
        return len(self.items), self.length

    def repeat(self, mark: tuple[int, int | None], times: int | None) -> bool:
        """The items added since `mark` came from one run of a loop body that runs `times` times
        (None: unknown, counted once): iteration i puts them `i * step` further on. False when
        that would make more than MAX_ITEMS copies of an item (then one is counted)."""
        count, length = mark
        added, self.items = self.items[count:], self.items[:count]
        step = None if self.length is None or length is None else self.length - length
        if times == 0:
            self.length = length
            return True
        bounded = times is None or all(len(item.labels) * times <= MAX_ITEMS for item in added)
        times = times if bounded else None
        for item in added:
            self.items.append(_Item(_repeated_labels(item.labels, step, times), item.params))
        if times is None or step is None or length is None:
            self.length = None
        else:
            self.length = length + times * step
        return bounded


Held: TypeAlias = list[RawParam] | ModuleList
"""What a name or attribute holds: the parameters of the modules it was given, or a list being filled."""


def _repeated_labels(labels: tuple[Label, ...], step: int | None, times: int | None) -> tuple[Label, ...]:
    if times is None:
        return tuple(None for _ in labels)
    if step is None or None in labels:
        return tuple(None for _ in range(times) for _ in labels)
    return tuple(sorted(label + i * step for i in range(times) for label in labels if label is not None))


def label_text(label: Label) -> str:
    return "[*]" if label is None else f"[{label}]"


def _label_value(text: str) -> Label:
    inside = text[1:-1]
    return int(inside) if inside.isdigit() else None


def _is_label(piece: tuple[str, ...]) -> bool:
    return all(text.startswith("[") for text in piece)


def _as_items(params: list[RawParam]) -> list[_Item]:
    """Parameters whose paths start with their item index, grouped per item (`[0..79]` is one
    group of 80 items)."""
    groups: dict[tuple[str, ...], list[RawParam]] = {}
    for param in params:
        pieces = param.where.pieces
        key = pieces[0] if pieces and _is_label(pieces[0]) else ()
        rest = ParamPath(pieces[1:]) if key else param.where
        groups.setdefault(key, []).append(replace(param, where=rest))
    return [_Item(tuple(_label_value(text) for text in key), group) for key, group in groups.items()]


def inferred_length(params: list[RawParam]) -> int | None:
    """How many items a list has when only its parameters are known (`[0]`..`[n-1]` all used)."""
    labels = {label for item in _as_items(params) for label in item.labels or (None,)}
    if not labels or None in labels:
        return None
    return len(labels) if labels == set(range(len(labels))) else None


def shifted(params: list[RawParam], offset: int | None) -> list[RawParam]:
    """A spread list's items (`[*blocks, head]`) placed from `offset` on."""
    shifted = ModuleList(length=offset)
    shifted.extend(params, None)
    return shifted.params()


def item_params(params: list[RawParam], index: int) -> list[RawParam]:
    """What item `index` of a tuple holds (`_, self.blocks = scanned(rngs)`)."""
    label = (f"[{index}]",)
    return [replace(p, where=ParamPath(p.where.pieces[1:])) for p in params if p.where.pieces[:1] == (label,)]


def joined_attributes(
    before: dict[str, Held],
    one: dict[str, Held],
    other: dict[str, Held],
) -> dict[str, Held]:
    """The attributes after both branches of an undecided `if`: one set differently by the two
    holds what each gave it (both are counted)."""
    joined: dict[str, Held] = {}
    for name in {**before, **one, **other}:
        a, b = one.get(name), other.get(name)
        if a is None or b is None or a is b:
            joined[name] = a if a is not None else b  # type: ignore[assignment]
        else:
            joined[name] = params_of(a) + params_of(b)
    return joined


def params_of(held: Held) -> list[RawParam]:
    return held.params() if isinstance(held, ModuleList) else held
