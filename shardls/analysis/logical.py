"""Logical axis rules: how Flax turns logical names ('embed', 'mlp') into mesh axes.

Flax has two different semantics, and code mixes them up:

* NNX (`flax.core.spmd.apply_rules`, applied when a Variable is created and by
  `nnx.get_partition_spec`): the context rules (`nnx.logical_axis_rules`, the same context
  manager as `nn.logical_axis_rules`) and the variable's own `sharding_rules=` are merged into a
  dict -- the last duplicate wins, and a name the two map differently raises `ValueError:
  Inconsistent logical axis annotations ...`. Only whole top-level entries are renamed; a name
  with no rule passes through unchanged (and later fails as an unknown mesh axis).
* Linen (`flax.linen.logical_to_mesh_axes`): the rules are walked in order; a rule applies to a
  dimension only if that dimension is still unassigned and none of its mesh axes is already used
  by another dimension of the same array; names no rule assigns become None.

Everything here is pure: rules come in as values read from the source, and out go the mesh spec,
the chain of renamings a hover shows, and the problems Flax would raise.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace

from shardls.analysis.values import Const, Seq, Value
from shardls.core import PartitionSpec, Problem, Severity, normalize_entry
from shardls.core.spec import SpecEntry, entry_axes

RawTarget = str | tuple[str | None, ...] | list[str | None] | None
"""A rule's mesh side as written; a list and a tuple differ (Flax compares them with `!=`)."""


@dataclass(frozen=True)
class Rule:
    name: str
    target: RawTarget
    source: str
    """Where the rule comes from, e.g. `with nnx.logical_axis_rules(...) at line 12`."""


@dataclass(frozen=True)
class Rules:
    """One set of rules as written, in order; `readable` is False when they could not be read."""

    rules: tuple[Rule, ...]
    source: str
    readable: bool = True

    def __bool__(self) -> bool:
        """Flax applies rules only when some are in effect (`if rules or sharding_rules:`)."""
        return bool(self.rules) or not self.readable


@dataclass(frozen=True)
class Translation:
    spec: PartitionSpec
    """In mesh axes (the input unchanged when no rules are in effect)."""
    logical: PartitionSpec | None
    """The spec as written, when rules were in effect."""
    chain: tuple[str, ...] = ()
    problems: tuple[tuple[int | None, Problem], ...] = ()
    """Each with the spec entry it is about, if any."""
    unresolved: tuple[int, ...] = ()
    """Entries that rules we could not read may rename."""
    failed: bool = False
    """Flax raises before it can shard anything (conflicting rules)."""
    unmapped: frozenset[str] = frozenset()
    """Logical names that reach the mesh unrenamed (each has an SH205 problem)."""


def read_rules(value: Value | None, source: str) -> Rules | None:
    """Rules from `[('embed', 'data'), ('mlp', ('fsdp', 'tp')), ('vocab', None)]` (tuples or lists)."""
    if value is None or (isinstance(value, Const) and value.value is None):
        return None
    rules = [_rule(item, source) for item in value.items] if isinstance(value, Seq) else [None]
    if any(rule is None for rule in rules):
        return Rules((), source, readable=False)
    return Rules(tuple(rule for rule in rules if rule is not None), source)


def _rule(item: Value, source: str) -> Rule | None:
    if not (isinstance(item, Seq) and len(item.items) == 2):
        return None
    name, target = item.items
    if not (isinstance(name, Const) and isinstance(name.value, str)):
        return None
    if isinstance(target, Const) and (target.value is None or isinstance(target.value, str)):
        return Rule(name.value, target.value, source)
    if isinstance(target, Seq):
        names = [t.value for t in target.items if isinstance(t, Const)]
        if len(names) == len(target.items) and all(n is None or isinstance(n, str) for n in names):
            axes: list[str | None] = [n for n in names if n is None or isinstance(n, str)]
            return Rule(name.value, axes if target.is_list else tuple(axes), source)
    return None


# -- NNX ------------------------------------------------------------------------------------


def nnx_translate(
    spec: PartitionSpec,
    context: Rules | None,
    local: Rules | None,
    mesh_axes: Collection[str] | None,
) -> Translation:
    """`flax.core.spmd.apply_rules`: merge the context and per-variable rules into a dict, then
    rename each top-level entry that has a rule. `mesh_axes` (when a mesh is known) tells an
    unmapped logical name from a mesh axis that is meant to pass through."""
    if not context and not local:
        return Translation(spec, None)
    table, conflict = _merged(context, local)
    if conflict is not None:
        return Translation(spec, spec, problems=((None, conflict),), failed=True)
    renamed = [table.get(e) if isinstance(e, str) else None for e in spec.entries]
    translated = PartitionSpec(
        tuple(normalize_entry(r.target) if r else e for e, r in zip(spec.entries, renamed)),
        spec.unreduced,
        spec.reduced,
    )
    chain = tuple(f"{e} → {_target_text(r.target)} ({r.source})" for e, r in zip(spec.entries, renamed) if r)
    strays = {
        index: names
        for index, (entry, rule) in enumerate(zip(spec.entries, renamed))
        if rule is None and (names := _not_mesh_axes(entry, mesh_axes))
    }
    if not all(rules.readable for rules in (context, local) if rules):
        unknown = tuple(None if i in strays else e for i, e in enumerate(translated.entries))
        return Translation(replace(translated, entries=unknown), spec, chain, unresolved=tuple(strays))
    sources = _sources(context, local)
    problems = tuple(
        (i, _unmapped(spec.entries[i], names, table, mesh_axes or (), sources, translated))
        for i, names in strays.items()
    )
    unmapped = frozenset(name for names in strays.values() for name in names)
    return Translation(translated, spec, chain, problems, unmapped=unmapped)


def _not_mesh_axes(entry: SpecEntry, mesh_axes: Collection[str] | None) -> list[str]:
    if mesh_axes is None:
        return []
    return [a for a in entry_axes(entry) if isinstance(a, str) and a not in mesh_axes]


def _merged(context: Rules | None, local: Rules | None) -> tuple[dict[str, Rule], Problem | None]:
    """`composite_rules`: with both sets present, a name the variable maps differently from what
    is already mapped raises; otherwise the one set becomes a dict (the last duplicate wins)."""
    table: dict[str, Rule] = {}
    check = bool(context) and bool(local)
    for rules in (context, local):
        for rule in rules.rules if rules else ():
            known = table.get(rule.name)
            if check and rules is local and known is not None and known.target != rule.target:
                return table, _conflict(known, rule)
            table[rule.name] = rule
    return table, None


def _conflict(known: Rule, rule: Rule) -> Problem:
    return Problem(
        "SH206",
        Severity.ERROR,
        f"Inconsistent logical axis annotations for {rule.name}: {known.target} vs {rule.target} "
        f"({known.source} maps it to {_target_text(known.target)}, {rule.source} to "
        f"{_target_text(rule.target)}); Flax raises ValueError when it creates the variable",
        {"axis": rule.name},
    )


def _unmapped(
    entry: SpecEntry,
    strays: list[str],
    table: dict[str, Rule],
    mesh_axes: Collection[str],
    sources: str,
    translated: PartitionSpec,
) -> Problem:
    names = ", ".join(repr(a) for a in strays)
    if not isinstance(entry, str) and any(a in table for a in strays):
        why = (
            f"Flax renames only whole entries, so {names} inside {_target_text(entry)} "
            "stay as written (write them as separate entries, or name the mesh axes in the tuple)"
        )
    else:
        why = f"no rule maps {names} ({sources}), so Flax passes it through unchanged"
    what = (
        f"logical axis {names} is not a mesh axis"
        if len(strays) == 1
        else f"logical axes {names} are not mesh axes"
    )
    return Problem(
        "SH205",
        Severity.ERROR,
        f"{what} ({', '.join(mesh_axes)}): {why}, and JAX fails with 'Resource axis: {strays[0]} "
        f"of {translated.canonical()} is not found in mesh'",
        {"axis": strays[0], "axes": strays, "mapped": sorted(table)},
    )


def _sources(*rule_sets: Rules | None) -> str:
    sources = [rules.source for rules in rule_sets if rules]
    return "rules: " + "; ".join(sources) if sources else "no rules"


# -- Linen ----------------------------------------------------------------------------------


class _Unassigned:
    """A logical name no rule has assigned yet (Linen's `_unassigned_axis`)."""


_UNASSIGNED = _Unassigned()


def linen_translate(spec: PartitionSpec, rules: Rules) -> Translation:
    """`flax.linen.logical_to_mesh_axes`: the first rule (in order) whose mesh axes are all still
    free takes an unassigned dimension; names left unassigned shard nothing."""
    if not rules.readable:
        named = tuple(i for i, e in enumerate(spec.entries) if isinstance(e, str))
        return Translation(spec, spec, unresolved=named)
    names = spec.entries
    result: list[object] = [_UNASSIGNED if isinstance(e, str) else e for e in names]
    chain: list[str] = []
    for rule in rules.rules:
        if rule.name not in names:
            continue
        position = names.index(rule.name)
        if result[position] is not _UNASSIGNED:
            continue
        taken = _leaves(result) & _leaves([rule.target])
        if taken:
            chain.append(
                f"{rule.name} ↛ {_target_text(rule.target)}: {', '.join(sorted(taken))} already used"
            )
            continue
        result[position] = rule.target
        chain.append(f"{rule.name} → {_target_text(rule.target)} ({rule.source})")
    for name, value in zip(names, result):
        if value is _UNASSIGNED:
            chain.append(f"{name} → None (no rule applies)")
    entries = tuple(None if v is _UNASSIGNED else normalize_entry(v) for v in result)  # type: ignore[arg-type]
    return Translation(PartitionSpec(entries, spec.unreduced, spec.reduced), spec, tuple(chain))


def _leaves(values: Iterable[object]) -> set[str]:
    found: set[str] = set()
    for value in values:
        if isinstance(value, str):
            found.add(value)
        elif isinstance(value, (tuple, list)):
            found |= _leaves(value)
    return found


def _target_text(target: object) -> str:
    """A rule's mesh side as Flax prints it: `data`, `None`, `('fsdp', 'tp')`, `['model']`."""
    return target if isinstance(target, str) else repr(target)
