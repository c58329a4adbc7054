"""Sharding pytrees paired with the values they lay out, as JAX pairs them.

A `jax.jit`/`nnx.jit` in_shardings or out_shardings, a `shard_map` in_specs/out_specs and a
`device_put` sharding are pytree prefixes of the values they meet: a leaf applies to every array
below it, and an NNX module meets it variable by variable. Every wrapper and placement pairs
them the same way, so the pairing lives here, apart from how each finds its calls.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from shardls.analysis.library.linen_specs import PartitionedV
from shardls.analysis.library.nnx_prefix import GraphStateV, StateShardingV, path_label
from shardls.analysis.library.nnx_variables import VariableV
from shardls.analysis.library.train_state import StructV
from shardls.analysis.values import ArrayV, Const, DictV, Seq, Value


class Argument(NamedTuple):
    """A value passed to (or returned by) the wrapped function, where it is written and its name."""

    value: Value | None
    node: ast.expr | None
    label: str


@dataclass(frozen=True)
class Pair:
    """One leaf of a sharding pytree and one array it applies to (None when no call is visible)."""

    spec: Value
    spec_node: ast.expr | None
    value: ArrayV | None
    node: ast.expr | None
    label: str


def pair_arguments(
    specs: Value | None,
    specs_node: ast.expr | None,
    arguments: Sequence[Argument],
    names: Sequence[str] = (),
) -> list[Pair]:
    """Match shardings to the tuple of positional arguments as JAX does: a tuple gives one entry
    per argument, anything else is a pytree prefix that applies to every argument. Entries with
    no argument here are named after the parameters in `names`."""
    if specs is None:
        return []
    if isinstance(specs, Seq):
        pairs: list[Pair] = []
        for index, item in enumerate(specs.items):
            label = names[index] if index < len(names) else f"args[{index}]"
            argument = arguments[index] if index < len(arguments) else Argument(None, None, label)
            node = element(specs_node, index, len(specs.items))
            pairs.extend(pair_tree(item, node, argument))
        return pairs
    if not arguments:
        return list(pair_tree(specs, specs_node, Argument(None, None, "")))
    return [pair for argument in arguments for pair in pair_tree(specs, specs_node, argument)]


def pair_tree(spec: Value, spec_node: ast.expr | None, argument: Argument) -> Iterator[Pair]:
    """Pair a sharding pytree with a value pytree; a leaf applies to every array below it."""
    value, node, label = argument
    if isinstance(value, GraphStateV) and not isinstance(spec, (Seq, DictV)):
        yield from _variable_pairs(spec, spec_node, value, node, label)
        return
    if isinstance(spec, Seq):
        values = value.items if isinstance(value, Seq) and len(value.items) == len(spec.items) else None
        for index, item in enumerate(spec.items):
            child = Argument(
                values[index] if values is not None else None,
                element(node, index, len(spec.items)),
                f"{label}[{index}]",
            )
            yield from pair_tree(item, element(spec_node, index, len(spec.items)), child)
        return
    if isinstance(spec, DictV):
        for key, item in zip(spec.keys, spec.values):
            name = key.value if isinstance(key, Const) else None
            child_value = value.get(name) if isinstance(value, DictV) else None
            yield from pair_tree(item, None, Argument(child_value, None, f"{label}[{name!r}]"))
        return
    if isinstance(spec, StructV):  # a tree of specs of the state's own type (`TrainState`)
        for name, item in spec.children:
            child_value = value.child(name) if isinstance(value, StructV) else None
            yield from pair_tree(item, None, Argument(child_value, None, f"{label}.{name}"))
        return
    arrays = list(_arrays(argument))
    if not arrays:
        yield Pair(spec, spec_node, None, node, label)
    for array, array_node, array_label in arrays:
        yield Pair(spec, spec_node, array, array_node, array_label)


def _variable_pairs(
    spec: Value, spec_node: ast.expr | None, state: GraphStateV, node: ast.expr | None, label: str
) -> Iterator[Pair]:
    """A module's variables, each with the sharding its prefix gives it: a `StateSharding`'s
    first matching filter, or one sharding for them all."""
    for path, variable in state.variables():
        if isinstance(spec, StateShardingV):
            chosen, chosen_node = spec.for_variable(path, variable), None
        else:
            chosen, chosen_node = spec, spec_node
        if chosen is not None and isinstance(variable.value, ArrayV):
            yield Pair(chosen, chosen_node, variable.value, node, label + path_label(path))


def _arrays(argument: Argument) -> Iterator[tuple[ArrayV, ast.expr | None, str]]:
    value, node, label = argument
    if isinstance(value, ArrayV):
        yield value, node, label
    elif isinstance(value, Seq):
        for index, item in enumerate(value.items):
            yield from _arrays(Argument(item, element(node, index, len(value.items)), f"{label}[{index}]"))
    elif isinstance(value, DictV):
        for key, item in zip(value.keys, value.values):
            name = key.value if isinstance(key, Const) else "?"
            yield from _arrays(Argument(item, None, f"{label}[{name!r}]"))
    elif isinstance(value, (VariableV, PartitionedV)):  # pytree nodes around their array
        yield from _arrays(Argument(value.value, node, label))
    elif isinstance(value, StructV):
        for name, item in value.children:
            yield from _arrays(Argument(item, None, f"{label}.{name}"))


def element(node: ast.expr | None, index: int, length: int) -> ast.expr | None:
    """The source of one item of a literal tuple or list (None when it is not written out)."""
    if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == length:
        element = node.elts[index]
        return None if isinstance(element, ast.Starred) else element
    return None
