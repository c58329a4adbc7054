"""Linen's spec and sharding trees: `nn.get_partition_spec`, `nn.get_sharding`,
`nn.logical_to_mesh` and `nn.logical_to_mesh_sharding`, mapped over trees whose structure is
known (dicts, tuples and lists, NNX variables as the pytree nodes they are).

`get_partition_spec` gives each boxed Linen parameter (`PartitionedV`, the leaves of the tree
`model.init` returns) the spec of its names as written, logical or not, and a bare array `P()`;
`get_sharding` puts those specs on a mesh without renaming anything (a logical name then fails
as an unknown mesh axis where the sharding is used, as in Flax). `logical_to_mesh` renames each
`PartitionSpec` leaf by Linen's rules (in order; a name no rule takes shards nothing), the rules
given, else those of the `nn.logical_axis_rules` context. Rules that cannot be read leave the
named entries unknown; a leaf or a mesh that is not known makes that part unknown, never empty.
"""

from __future__ import annotations

from dataclasses import dataclass

from shardls.analysis.library import CallArgs
from shardls.analysis.library.convert import spec_of
from shardls.analysis.library.pytrees import Leaf, mapped
from shardls.analysis.library.registry import calls
from shardls.analysis.logical import Rules, linen_translate, read_rules
from shardls.analysis.values import ArrayV, Const, MeshV, ShardingV, SpecV, Unknown, Value
from shardls.core import PartitionSpec


@dataclass(frozen=True)
class PartitionedV(Value):
    """A Linen parameter boxed with its axis names (`nn.Partitioned`/`nn.LogicallyPartitioned`)."""

    value: Value
    names: Value
    mesh: Value | None = None


def _partition_spec(leaf: Value) -> Value:
    if isinstance(leaf, PartitionedV):
        return spec_of(leaf.names) or Unknown("axis names shardls cannot read")
    if isinstance(leaf, ArrayV):
        return SpecV(PartitionSpec(()))  # Flax replicates an array that has no names
    if isinstance(leaf, SpecV):
        return leaf  # a spec tree is already its own partition spec
    return Unknown("a leaf that is not a known parameter")


@calls("flax.linen.get_partition_spec", "flax.core.meta.get_partition_spec")
def _get_partition_spec(call: CallArgs) -> Value | None:
    return mapped(call.get(0, "tree"), _partition_spec)


@calls("flax.linen.get_sharding", "flax.core.meta.get_sharding")
def _get_sharding(call: CallArgs) -> Value | None:
    mesh = call.get(1, "mesh")
    if not isinstance(mesh, MeshV):
        return Unknown("the mesh of nn.get_sharding is not known")

    def sharding(leaf: Value) -> Value:
        spec = _partition_spec(leaf)
        return ShardingV(spec, mesh) if isinstance(spec, SpecV) else spec

    return mapped(call.get(0, "tree"), sharding)


def _rules(call: CallArgs, index: int) -> Rules:
    """The rules passed, else those of the `nn.logical_axis_rules` context in effect; with
    neither (or rules that cannot be read) the renaming is not known."""
    line = call.frame.line_of(call.node) + 1
    given = call.get(index, "rules")
    if given is not None and not (isinstance(given, Const) and given.value is None):
        return read_rules(given, f"rules at line {line}") or Rules((), "", readable=False)
    context = call.evaluator.context
    if context is not None and context.rules:
        current = context.rules[-1]
        return read_rules(current.rules, current.how) or Rules((), current.how, readable=False)
    return Rules((), "no logical axis rules in effect here", readable=False)


def _renamed(rules: Rules) -> Leaf:
    def rename(leaf: Value) -> Value:
        if not isinstance(leaf, SpecV):
            return Unknown("a leaf that is not a PartitionSpec")
        translation = linen_translate(leaf.spec, rules)
        unknown = tuple(sorted({*leaf.unknown_entries, *translation.unresolved}))
        # An entry whose renaming is not known is None with its index in `unknown_entries`.
        entries = tuple(None if i in unknown else e for i, e in enumerate(translation.spec.entries))
        spec = PartitionSpec(entries, translation.spec.unreduced, translation.spec.reduced)
        return SpecV(spec, unknown, leaf.span, leaf.entry_spans, leaf.path)

    return rename


@calls("flax.linen.logical_to_mesh", "flax.linen.spmd.logical_to_mesh")
def _logical_to_mesh(call: CallArgs) -> Value | None:
    return mapped(call.get(0, "tree"), _renamed(_rules(call, 1)))


@calls("flax.linen.logical_to_mesh_sharding", "flax.linen.spmd.logical_to_mesh_sharding")
def _logical_to_mesh_sharding(call: CallArgs) -> Value | None:
    mesh = call.get(1, "mesh")
    if not isinstance(mesh, MeshV):
        return Unknown("the mesh of nn.logical_to_mesh_sharding is not known")
    rename = _renamed(_rules(call, 2))

    def sharding(leaf: Value) -> Value:
        spec = rename(leaf)
        return ShardingV(spec, mesh) if isinstance(spec, SpecV) else spec

    return mapped(call.get(0, "tree"), sharding)
