"""What Python does with values that are already known, with nothing left to evaluate: their
truth, unpacking them into targets, and a list, dict or set after an item write or a mutating
method."""

from __future__ import annotations

import ast

from shardls.analysis.settings import DEFAULT_COUNT_SOURCE
from shardls.analysis.values import (
    ArrayV,
    Choice,
    Const,
    DictV,
    Guard,
    MatchV,
    Seq,
    SetV,
    Unknown,
    Value,
    as_int,
    guarded_options,
)


def decided(value: Value) -> bool | None:
    """Which way a test that chooses the code to run goes (`if`, a conditional expression), as
    `truthiness`; None (either way) when it rests on the default device count: code that adapts to
    the machine (`if len(jax.devices()) >= 4: mesh = ...`) runs the other branch on another one,
    so what the assumed count's branch builds must not be taken as known from the code."""
    origin = value.origin
    if (
        origin is not None
        and origin.assumption is not None
        and f"({DEFAULT_COUNT_SOURCE})" in origin.assumption
    ):
        return None
    return truthiness(value)


def truthiness(value: Value) -> bool | None:
    if isinstance(value, Const):
        return bool(value.value)
    if isinstance(value, Seq | DictV | SetV):
        return bool(value.items if not isinstance(value, DictV) else value.keys)
    if isinstance(value, MatchV):
        return True
    return None


def unpack(value: Value, path: tuple[int | str, ...]) -> Value:
    for step in path:
        if isinstance(value, ArrayV) and isinstance(step, int):
            value = _row(value, step)
            continue
        if not isinstance(value, Seq):
            return Unknown("unpacking an unknown value")
        if isinstance(step, int):
            if step >= len(value.items):
                return Unknown("unpacking: too few values")
            value = value.items[step]
        else:
            value = Seq(value.items[int(step.removeprefix("star")) :])
    return value


def tuple_options(value: Choice, key: int) -> list[tuple[Value, frozenset[Guard]]]:
    """The options of a value being unpacked, each guarded as the one branch taken of a choice
    between them all: option `i` comes through branch True of the guard `key + i` and branch False
    of every other option's. `key` is the id of the unpacked expression's node; its options are at
    most `Limits.choices` (16), fewer than the bytes of the node, so `key + i` is no other
    statement's id. Options with the same value for one target merge as `choice` merges them
    (keeping the guards they share: none, for a part every option gives)."""
    guarded = list(guarded_options(value))
    return [
        (option, guard | {(key + other, other == index) for other in range(len(guarded))})
        for index, (option, guard) in enumerate(guarded)
    ]


def _row(array: ArrayV, index: int) -> Value:
    """One row of an array unpacked into targets (`k1, k2 = jax.random.split(key)`): the array
    without its leading dimension, laid out anew (Python iterates over it row by row)."""
    if not array.shape:
        return Unknown("unpacking an array of unknown or no dimensions")
    rows = as_int(array.shape[0])
    if rows is not None and index >= rows:
        return Unknown("unpacking: too few rows")
    return ArrayV(array.shape[1:], array.dtype)


def bind_target(target: ast.expr, value: Value, local: dict[str, Value]) -> bool:
    """Bind a comprehension/loop target; False when the value cannot be unpacked."""
    if isinstance(target, ast.Name):
        local[target.id] = value
        return True
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, Seq):
        if len(target.elts) != len(value.items):
            return False
        return all(bind_target(t, v, local) for t, v in zip(target.elts, value.items))
    return False


def mutated(
    before: Value, method: str, args: list[Value], kwargs: dict[str, Value], limit: int
) -> Value | None:
    """A list, dict or set after one call of a mutating method, when it is known; None when not
    (an unknown object, an unknown argument count, a method whose result depends on the data)."""
    if kwargs or not isinstance(before, (Seq, DictV, SetV)):
        return None
    if isinstance(before, Seq) and before.is_list:
        items = before.items
        if method == "append" and len(args) == 1:
            items = items + (args[0],)
        elif method == "extend" and len(args) == 1 and isinstance(args[0], Seq):
            items = items + args[0].items
        elif method == "insert" and len(args) == 2 and as_int(args[0]) is not None:
            at = as_int(args[0])
            assert at is not None
            items = items[:at] + (args[1],) + items[at:]
        elif method == "clear" and not args:
            items = ()
        else:
            return None
        return Seq(items, True) if len(items) <= limit else None
    if isinstance(before, DictV) and method == "update" and len(args) == 1 and isinstance(args[0], DictV):
        merged = _merged_dicts(before, args[0])
        return merged if len(merged.keys) <= limit else None
    if isinstance(before, SetV) and method == "add" and len(args) == 1:
        return SetV(before.items + (args[0],)) if len(before.items) < limit else None
    return None


def _merged_dicts(first: DictV, second: DictV) -> DictV:
    entries = dict(zip(first.keys, first.values))
    entries.update(zip(second.keys, second.values))
    return DictV(tuple(entries), tuple(entries.values()))


def with_item(container: Value, key: Value, item: Value) -> Value:
    """`container[key] = item` on a copy: a dict with a known key, or a list with a known index."""
    if isinstance(container, DictV) and isinstance(key, Const):
        keys, values = list(container.keys), list(container.values)
        found = next((i for i, k in enumerate(keys) if isinstance(k, Const) and k.value == key.value), None)
        if found is None:
            keys.append(key)
            values.append(item)
        else:
            values[found] = item
        return DictV(tuple(keys), tuple(values))
    index = as_int(key)
    if (
        isinstance(container, Seq)
        and container.is_list
        and index is not None
        and -len(container.items) <= index < len(container.items)
    ):
        items = list(container.items)
        items[index] = item
        return Seq(tuple(items), True)
    return Unknown("an item written to a value of unknown contents")
