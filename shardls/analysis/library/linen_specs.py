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

import ast
from dataclasses import dataclass

from shardls.analysis.library import CallArgs
from shardls.analysis.library.convert import spec_of
from shardls.analysis.library.pytrees import Leaf, mapped
from shardls.analysis.library.registry import calls
from shardls.analysis.logical import Rules, linen_translate, read_rules
from shardls.analysis.values import ArrayV, Const, MeshV, Ref, ShardingV, SpecV, Unknown, Value
from shardls.core import PartitionSpec

RULES_CONTEXT = "flax.nnx.logical_axis_rules"
"""The canonical name of every spelling of Flax's rules context (`nn.logical_axis_rules`,
`nn_partitioning.axis_rules`, ...)."""


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
    """The rules passed, else those of the `nn.logical_axis_rules` context the call runs in;
    with neither (or rules that cannot be read) the renaming is not known.

    The context is the innermost `with ...logical_axis_rules(...)` around the call in its own
    code. Failing that, inside a function, the rules its body runs under (the walker's context:
    a caller's `with`); at module level none, since a value bound there may be read under
    another `with` than the one it was computed in."""
    line = call.frame.line_of(call.node) + 1
    given = call.get(index, "rules")
    if given is not None and not (isinstance(given, Const) and given.value is None):
        return read_rules(given, f"rules at line {line}") or Rules((), "", readable=False)
    written = _enclosing_rules(call)
    if written is not None:
        return written
    context = call.evaluator.context
    if call.frame.scope.function is not None and context is not None and context.rules:
        current = context.rules[-1]
        return read_rules(current.rules, current.how) or Rules((), current.how, readable=False)
    return Rules((), "no logical axis rules in effect here", readable=False)


def _enclosing_rules(call: CallArgs) -> Rules | None:
    """The rules of the innermost `with nn.logical_axis_rules(rules):` written around the call."""
    found: Rules | None = None
    for statement in call.frame.segment.body:
        for node in ast.walk(statement):
            if not isinstance(node, (ast.With, ast.AsyncWith)) or not _contains(node, call.node):
                continue
            for item in node.items:
                expression = item.context_expr
                if not (isinstance(expression, ast.Call) and expression.args):
                    continue
                func = call.evaluator.evaluate(expression.func, call.frame)
                if isinstance(func, Ref) and func.qualname == RULES_CONTEXT:
                    how = f"with {ast.unparse(expression.func)}(...) at line {call.frame.line_of(node) + 1}"
                    value = call.evaluator.evaluate(expression.args[0], call.frame)
                    found = read_rules(value, how) or Rules((), how, readable=False)
    return found


def _contains(block: ast.With | ast.AsyncWith, node: ast.AST) -> bool:
    return any(node is inner for statement in block.body for inner in ast.walk(statement))


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
