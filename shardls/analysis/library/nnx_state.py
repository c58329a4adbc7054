"""Flax NNX parameter trees as values: `nnx.state(module[, filter])` (and `nnx.variables`),
`nnx.split(module)`, `nnx.to_pure_dict(state[, fn])` (and `nnx.pure`),
`nnx.get_partition_spec(state)` and `nnx.get_named_sharding(state, mesh)`.

Real code takes a model's parameters this way and hands them, as a pytree, to `jax.shard_map`,
`jax.jit` or `device_put` (maxtext's DeepSeek layer: `fetch_weights(nnx.to_pure_dict(nnx.state(
self, nnx.Param), extract_fn), dtype)`). The tree is `nnx_tree.py`'s; this module reads the
filters and maps the leaves. Inside a method, `nnx.state(self)` is the state of an instance of
the method's class whose constructor arguments are not known here: every size that depends on
them is named after its expression, while the ranks, keys and annotations the code writes stay
known.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from shardls.analysis.definitions import ClassInfo
from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.convert import spec_of
from shardls.analysis.library.nnx_tree import EVERY_KIND, FlaxLayerV, Kinds, TreeBuilder
from shardls.analysis.library.nnx_variables import VARIABLE_KINDS, VariableV
from shardls.analysis.library.pytrees import mapped
from shardls.analysis.library.registry import attributes, calls, methods
from shardls.analysis.recognizers.nnx.layers import LAYER_NAMES
from shardls.analysis.sharded.layers import LayerV, untyped_linear_call
from shardls.analysis.sharded.registry import typed_call
from shardls.analysis.values import (
    ArrayV,
    BoundMethod,
    Const,
    DictV,
    InstanceV,
    MeshV,
    Ref,
    Seq,
    ShardingV,
    SpecV,
    Unknown,
    Value,
)
from shardls.core import PartitionSpec


@calls(*LAYER_NAMES)
def _layer(call: CallArgs) -> Value | None:
    """A Flax layer, unless the typing pass makes its own typed value for it (`sharded/layers`)."""
    typed = typed_call(call, None)
    return typed if typed is not None else FlaxLayerV(call)


@attributes(FlaxLayerV, LayerV)
def _layer_variable(
    library: Library, evaluator: Evaluator, base: Value, attr: str, frame: Frame
) -> Value | None:
    """`layer.kernel`: the parameter as `nnx.state(layer)` has it."""
    if not isinstance(base, (FlaxLayerV, LayerV)):
        return None
    tree = TreeBuilder(base.call.evaluator, base.call.frame, EVERY_KIND).state(base)
    return tree.get(attr) if isinstance(tree, DictV) else None


@methods(FlaxLayerV, "__call__")
def _layer_called(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    """`linear(x)` where no types are recorded (Auto axes): the shape of its result."""
    assert isinstance(method.base, FlaxLayerV)
    return untyped_linear_call(method.base.call, call)


@calls("flax.nnx.List", "flax.nnx.Dict", "flax.nnx.data")
def _container(call: CallArgs) -> Value | None:
    """`nnx.List(layers)`, `nnx.Dict(mapping)`, `nnx.data(x)`: what they wrap, which Flax then
    treats as part of the module's state (list items keyed by index, dict items by key)."""
    given = call.get(0)
    if call.qualname.endswith(".List"):
        return Seq(given.items, is_list=True) if isinstance(given, Seq) else None
    if call.qualname.endswith(".Dict"):
        return given if isinstance(given, DictV) else None
    return given


@calls("flax.nnx.state", "flax.nnx.variables")
def _state(call: CallArgs) -> Value | None:
    """`nnx.state(node)`: every variable; `nnx.state(node, nnx.Param)`: one tree per filter
    (several filters give a tuple of trees). `nnx.variables` gives the same tree."""
    trees = _trees(call, _receiver(call), call.args[1:])
    return trees[0] if len(trees) == 1 else Seq(tuple(trees))


@calls("flax.nnx.split")
def _split(call: CallArgs) -> Value | None:
    """`graphdef, state = nnx.split(model)` (one state per filter): the graph definition is not
    modelled, the states are."""
    trees = _trees(call, _receiver(call), call.args[1:])
    return Seq((Unknown("an NNX graph definition"), *trees))


@calls("flax.nnx.to_pure_dict", "flax.nnx.pure")
def _to_pure_dict(call: CallArgs) -> Value | None:
    """Each variable replaced by its value, or by `extract_fn(variable)` when given
    (`nnx.pure(state)` keeps Flax's State type, which reads the same)."""
    function = call.get(1, "extract_fn") if call.qualname.endswith("to_pure_dict") else None
    if function is not None and isinstance(function, Const) and function.value is None:
        function = None

    def leaf(variable: VariableV) -> Value:
        if function is None:
            return variable.value
        return call.evaluator.call(function, [variable], {}, call.node, call.frame)

    return mapped(call.get(0, "state"), _on_variables(leaf), variables=True)


@calls("flax.nnx.get_partition_spec")
def _get_partition_spec(call: CallArgs) -> Value | None:
    """Each variable's value replaced by the spec of its annotation (`P(*sharding_names)`), or
    `P()` when it has none (Flax replicates an unannotated array)."""
    return mapped(call.get(0, "tree"), _on_variables(lambda v: _with_value(v, _spec(v))), variables=True)


@calls("flax.nnx.get_named_sharding")
def _get_named_sharding(call: CallArgs) -> Value | None:
    """`NamedSharding(mesh, spec)` for each variable, the spec as `get_partition_spec` gives it."""
    mesh = call.get(1, "mesh")
    mesh_value = mesh if isinstance(mesh, MeshV) else None

    def sharding(variable: VariableV) -> Value:
        spec = _spec(variable)
        return _with_value(variable, ShardingV(spec, mesh_value) if isinstance(spec, SpecV) else spec)

    return mapped(call.get(0, "tree"), _on_variables(sharding), variables=True)


def _trees(call: CallArgs, node: Value, filters: list[Value]) -> list[Value]:
    """One tree per filter; as in Flax, a variable goes to the first filter that selects it
    (`nnx.split(model, nnx.Param, ...)`: `...` is the rest)."""
    found: list[Value] = []
    taken: Kinds | None = frozenset()
    for kinds in [_kinds(f) for f in filters] or [EVERY_KIND]:
        if kinds is None or taken is None:
            found.append(Unknown("an NNX filter shardls does not read"))
            taken = None  # what the later filters get is not known either
            continue
        tree = TreeBuilder(call.evaluator, call.frame, kinds - taken).state(node)
        found.append(tree if tree is not None else DictV((), ()))
        taken |= kinds
    return found


def _kinds(written: Value) -> Kinds | None:
    """The variable types a filter selects (`...`/True: every type); None when not read (a
    predicate, a path filter, a variable type not modelled)."""
    if (isinstance(written, Ref) and written.qualname == "builtins.Ellipsis") or (
        isinstance(written, Const) and written.value is True
    ):
        return EVERY_KIND
    if isinstance(written, Ref) and written.qualname.startswith("flax.nnx."):
        kind = written.qualname.rsplit(".", 1)[-1]
        return frozenset({kind}) if kind in VARIABLE_KINDS else None
    if isinstance(written, Seq):  # a tuple of filters selects their union
        parts = [_kinds(item) for item in written.items]
        if all(part is not None for part in parts):
            return frozenset().union(*(part for part in parts if part is not None))
    return None


def _on_variables(function: Callable[[VariableV], Value]) -> Callable[[Value], Value]:
    """`function` for each variable of a state; anything else (an unknown subtree) is kept."""
    return lambda leaf: function(leaf) if isinstance(leaf, VariableV) else leaf


def _with_value(variable: VariableV, value: Value) -> VariableV:
    return VariableV(variable.kind, value, variable.annotation)


def _spec(variable: VariableV) -> Value:
    if variable.annotation is None:
        if isinstance(variable.value, ArrayV):
            return SpecV(PartitionSpec(()))
        return Unknown("the value of a variable without an annotation")
    spec = spec_of(variable.annotation.sharding)
    return spec if spec is not None else Unknown("an annotation shardls cannot read")


def _receiver(call: CallArgs) -> Value:
    """The module `nnx.state`/`nnx.split` is asked about. `self` in a method whose callers are
    not visible is an instance of the method's class built with arguments nobody passes here."""
    given = call.get(0, "node")
    if given is None:
        return Unknown("no module given")
    if not isinstance(given, Unknown):
        return given
    written = call.arg_node(0, "node")
    function = call.frame.scope.function
    if (
        isinstance(written, ast.Name)
        and function is not None
        and function.owner is not None
        and function.kind == "method"
        and function.params
        and function.params[0].arg == written.id
    ):
        return unbuilt_instance(call.evaluator, function.owner, call.frame)
    return given


def unbuilt_instance(evaluator: Evaluator, cls: ClassInfo, frame: Frame) -> InstanceV:
    """An instance of `cls` whose constructor arguments are not known: each is a symbol named
    after its parameter (never its default, which a caller may have overridden)."""
    init = next((k.methods["__init__"] for k in evaluator.mro(cls, frame) if "__init__" in k.methods), None)
    arguments = init.node.args if init is not None else None
    names = (
        [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)][1:]
        if arguments
        else []
    )
    fields = tuple((name, Unknown(f"argument {name} of {cls.name}(...)", symbol=name)) for name in names)
    return InstanceV(cls, fields)
