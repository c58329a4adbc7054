"""Where a quick fix can send the result of an operation JAX rejects, checked by the operation's
own rule: a choice is offered only when the fixed operation type-checks.

Two kinds of fix:

- **`out_sharding=`** for an operation that asks for it (an ambiguous contraction, SH301; a
  reshape that is neither one split nor one merge, SH305; a gather, SH308, rewritten as
  `.at[...].get(out_sharding=...)`). The candidates start from what the rule infers once the
  operands stop sharding the dimensions it cannot place (stripped one by one, the last operand
  first, until the rule accepts), then put the stripped mesh axes back on the result's
  dimensions they divide: all of them in order, then each alone, and last the replicated result.
- **reshard operands alike** for an operation whose operands must share one sharding
  (concatenate and stack, SH307): each operand's sharding in turn, with every other operand
  resharded to it.

The rules are passed in as functions of the operands (and of `out_sharding`), so this module
knows no operation itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from shardls.core.spec import PartitionSpec
from shardls.core.typing.placement import reshard
from shardls.core.typing.types import DimAxes, ShardedType, SpecAxes, axes_size

OutRule = Callable[[Sequence[ShardedType], PartitionSpec | None], ShardedType]
"""The operation on these operands, with `out_sharding=` given (or not, for None)."""

JoinRule = Callable[[Sequence[ShardedType]], ShardedType]
"""The operation on these operands."""

MAX_CHOICES = 4
OUT_SHARDING_CODES = frozenset({"SH301", "SH305", "SH308"})
RESHARD_CODES = frozenset({"SH307"})


@dataclass(frozen=True)
class OutShardingChoice:
    spec: PartitionSpec
    result: ShardedType
    """What the fixed operation gives."""


@dataclass(frozen=True)
class ReshardChoice:
    spec: PartitionSpec
    """The sharding every operand then has."""
    operands: tuple[int, ...]
    """The operands to reshard to it (the others have it already)."""
    result: ShardedType


def out_sharding_choices(operands: Sequence[ShardedType], rule: OutRule) -> tuple[OutShardingChoice, ...]:
    """The `out_sharding=` specs that make the rejected operation type-check, best first."""
    if any(t.unreduced or t.reduced for t in operands):
        return ()  # partial sums change what out_sharding means: no fix is certain
    proposals: list[SpecAxes] = []
    inferred = _inferred(operands, rule)
    if inferred is not None:
        natural, stripped = inferred
        proposals.append(_restored(natural, stripped))
        proposals.append(natural.spec)
        proposals.extend(_restored(natural, [group]) for group in stripped)
    replicated = _accepted(rule, operands, PartitionSpec.of())
    if replicated is not None:
        proposals.append(replicated.spec)
    found: list[OutShardingChoice] = []
    for axes in proposals:
        spec = _partition_spec(axes)
        result = _accepted(rule, operands, spec)
        if result is not None and all(c.result != result for c in found):
            found.append(OutShardingChoice(spec, result))
    return tuple(found[:MAX_CHOICES])


def reshard_choices(operands: Sequence[ShardedType], rule: JoinRule) -> tuple[ReshardChoice, ...]:
    """For each distinct sharding among the operands (in order): every other operand resharded
    to it, when `reshard` and then the operation accept that."""
    found: list[ReshardChoice] = []
    tried: list[SpecAxes] = []
    for target in operands:
        if target.unreduced or target.reduced or target.spec in tried:
            continue
        tried.append(target.spec)
        spec = _partition_spec(target.spec)
        try:
            moved = [t if t.spec == target.spec else reshard(t, spec) for t in operands]
            result = rule(moved)
        except Exception:  # (a rejection or a malformed case: no such choice)
            continue
        changed = tuple(i for i, t in enumerate(operands) if t.spec != target.spec)
        found.append(ReshardChoice(spec, changed, result))
    return tuple(found[:MAX_CHOICES])


def _inferred(operands: Sequence[ShardedType], rule: OutRule) -> tuple[ShardedType, list[DimAxes]] | None:
    """What the rule gives without `out_sharding=` once enough operand dimensions are unsharded,
    and the axes taken away (in the order they were)."""
    types = list(operands)
    stripped: list[DimAxes] = []
    for index in reversed(range(len(types))):
        for dim in range(types[index].rank):
            axes = types[index].spec[dim]
            if not axes:
                continue
            spec = list(types[index].spec)
            spec[dim] = ()
            types[index] = replace(types[index], spec=tuple(spec))
            stripped.append(axes)
            result = _accepted(rule, types, None)
            if result is not None:
                return result, sorted(stripped, key=lambda group: _first_position(operands, group))
    return None


def _first_position(operands: Sequence[ShardedType], group: DimAxes) -> tuple[int, int]:
    for index, t in enumerate(operands):
        for dim, axes in enumerate(t.spec):
            if axes == group:
                return index, dim
    return len(operands), 0


def _restored(natural: ShardedType, groups: Sequence[DimAxes]) -> SpecAxes:
    """`natural`'s spec with each group of axes put back on a dimension it divides: the first
    unsharded one at or after the previous group's (keeping the axes' order), else added to the
    first sharded one it still divides."""
    spec = [tuple(axes) for axes in natural.spec]
    start = 0
    for group in groups:
        if any(a in axes for axes in spec for a in group):
            continue
        dims = range(start, len(spec))
        fits = [d for d in dims if not spec[d] and natural.shape[d] % axes_size(natural.mesh, group) == 0]
        fits = fits or [
            d for d in dims if natural.shape[d] % axes_size(natural.mesh, (*spec[d], *group)) == 0 and spec[d]
        ]
        if fits:
            spec[fits[0]] = (*spec[fits[0]], *group)
            start = fits[0]
    return tuple(spec)


def _accepted(
    rule: OutRule, operands: Sequence[ShardedType], spec: PartitionSpec | None
) -> ShardedType | None:
    try:
        return rule(operands, spec)
    except Exception:  # (rejected, or malformed for this spec: not a choice)
        return None


def _partition_spec(axes: SpecAxes) -> PartitionSpec:
    return PartitionSpec.of(*(None if not a else a[0] if len(a) == 1 else a for a in axes))
