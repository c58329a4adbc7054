"""PartitionSpec, NamedSharding, and the calls that move an array onto a layout."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import cast

from shardls.analysis.evaluator import Frame
from shardls.analysis.library import CallArgs
from shardls.analysis.library.convert import dtype_of, shape_of, sharding_of, spec_from_entries
from shardls.analysis.library.pytrees import MAX_NESTING, mapped
from shardls.analysis.library.registry import calls, subscripts
from shardls.analysis.library.train_state import StructV
from shardls.analysis.values import (
    ArrayV,
    Choice,
    Const,
    DictV,
    Guard,
    MeshV,
    Origin,
    Ref,
    Seq,
    ShardingV,
    SpecV,
    Unknown,
    Value,
    as_int,
    guarded_alternatives,
    options,
)
from shardls.core import UNCONSTRAINED, DType
from shardls.core.spec import SpecEntry


@calls("jax.sharding.PartitionSpec")
def _partition_spec(call: CallArgs) -> Value | None:
    """One spec, or one per combination of entries that depend on a condition
    (`fsdp = "fsdp" if use_fsdp else None; P(fsdp)`)."""
    combinations = guarded_alternatives(call.args)
    specs = [_one_spec(call, entries) for entries, _ in combinations]
    return specs[0] if len(specs) == 1 else call.evaluator.choice(specs, [g for _, g in combinations])


def _one_spec(call: CallArgs, entries: tuple[Value, ...]) -> Value:
    original = _source(call.frame, call.node)
    spec = spec_from_entries(entries, call.get(None, "unreduced"), call.get(None, "reduced"), original)
    frame = call.frame
    entry_spans = tuple(
        None
        if isinstance(arg, ast.Starred) or any(isinstance(a, ast.Starred) for a in call.node.args[:i])
        else frame.span(arg)
        for i, arg in enumerate(call.node.args)
    )
    return SpecV(spec.spec, spec.unknown_entries, frame.span(call.node), entry_spans, frame.module.path)


def _source(frame: Frame, node: ast.Call) -> str | None:
    """The spec as the user wrote it (one line of source), for display."""
    span = frame.span(node)
    lines = frame.module.source.lines
    if span.line != span.end_line or span.line >= len(lines):
        return None
    text = lines[span.line][span.column : span.end_column]
    return text if len(text) <= 200 else None


@calls("jax.sharding.NamedSharding")
def _named_sharding(call: CallArgs) -> Value | None:
    shardings: list[Value] = []
    guards: list[frozenset[Guard]] = []
    span, path = call.frame.span(call.node), call.frame.module.path
    for (mesh, spec), guard in guarded_alternatives(
        [call.get(0, "mesh") or Unknown("no mesh"), call.get(1, "spec") or Unknown("")]
    ):
        if isinstance(spec, SpecV):
            known = mesh if isinstance(mesh, MeshV) else None
            shardings.append(ShardingV(spec, known, span=span, path=path))
            guards.append(guard)
    if not shardings:
        return Unknown("NamedSharding with an unknown spec")
    return shardings[0] if len(shardings) == 1 else call.evaluator.choice(shardings, guards)


@calls("jax.device_put", "jax.lax.with_sharding_constraint", "jax.sharding.reshard")
def _placed(call: CallArgs) -> Value | None:
    array = call.get(0, "x")
    target = call.get(1, "device", "shardings", "out_shardings")
    if isinstance(array, ArrayV):
        return _placed_array(array, sharding_of(target))
    if isinstance(array, (Seq, DictV, StructV)):
        return _placed_tree(array, target)
    return None


def _placed_array(array: ArrayV, target: ShardingV | None) -> ArrayV:
    return ArrayV(
        array.shape, array.dtype, target or array.sharding, placed=target is not None or array.placed
    )


def _placed_tree(tree: Value, target: Value | None, depth: int = 0) -> Value:
    """`params = jax.device_put(params, shardings)` (and `reshard`, `with_sharding_constraint`) of
    a pytree: each array placed by the sharding JAX pairs it with (the shardings are a prefix of
    the tree, a leaf applying to every array below it), so that what follows the placement still
    sees the arrays' shapes (jax_privacy's second `reshard` of its `model_params` dict found them
    unknown). Where the two trees' structures differ (JAX raises) or are not known, the part is
    unknown; so is an array under a target that is neither given, a sharding nor a tree (a device,
    a value not known here): its shape is known but not its sharding, so it keeps none."""
    if depth > MAX_NESTING:
        return Unknown("a tree nested too deeply")
    if isinstance(target, Seq):
        if not isinstance(tree, Seq) or len(tree.items) != len(target.items):
            return Unknown("a placed tree whose structure is not its shardings'")
        items = tuple(_placed_tree(item, t, depth + 1) for item, t in zip(tree.items, target.items))
        return Seq(items, tree.is_list)
    if isinstance(target, DictV):
        keys = _keys(tree) if isinstance(tree, DictV) else None
        if keys is None or keys != _keys(target):
            return Unknown("a placed tree whose structure is not its shardings'")
        assert isinstance(tree, DictV)
        values = (
            _placed_tree(value, target.get(cast(Const, key).value), depth + 1)
            for key, value in zip(tree.keys, tree.values)
        )
        return DictV(tree.keys, tuple(values))
    if isinstance(target, StructV):
        if not target.same_node(tree):
            return Unknown("a placed tree whose structure is not its shardings'")
        assert isinstance(tree, StructV)
        return tree.with_children(
            tuple(_placed_tree(child, target.child(name), depth + 1) for name, child in tree.children)
        )
    sharding = sharding_of(target)
    return mapped(tree, lambda leaf: _placed_leaf(leaf, target, sharding), depth)


def _placed_leaf(leaf: Value, target: Value | None, sharding: ShardingV | None) -> Value:
    if not isinstance(leaf, ArrayV):
        return Unknown("a placed leaf that is not an array known here")
    if target is None or sharding is not None:
        return _placed_array(leaf, sharding)
    return ArrayV(leaf.shape, leaf.dtype)


def _keys(tree: DictV) -> frozenset[object] | None:
    """The dict's keys, which JAX pairs whatever their order (None when one is not known)."""
    if not all(isinstance(key, Const) for key in tree.keys):
        return None
    return frozenset(key.value for key in tree.keys if isinstance(key, Const))


@calls("jax.make_array_from_callback")
def _from_callback(call: CallArgs) -> Value | None:
    """`make_array_from_callback(shape, sharding, callback, dtype=None)`: the global shape is the
    first argument; the dtype is `dtype=` when given, else that of what the callback returns for
    an index not known here (`lambda idx: host[idx]`)."""
    dtype = dtype_of(call.get(3, "dtype"), call.library.environment.x64)
    callback = call.get(2, "data_callback")
    if dtype is None and callback is not None:
        block = call.evaluator.call(callback, [Unknown("a device's index")], {}, None, call.frame)
        dtype = block.dtype if isinstance(block, ArrayV) else None
    return _global_array(call, dtype)


@calls("jax.make_array_from_single_device_arrays")
def _from_single_device_arrays(call: CallArgs) -> Value | None:
    """`make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None)` (JAX-Toolbox,
    orbax, multi-host loaders): the global shape is the first argument, the dtype `dtype=` when
    given, else that of the per-device arrays when the list of them is known."""
    dtype = dtype_of(call.get(None, "dtype"), call.library.environment.x64)
    arrays = call.get(2, "arrays")
    if dtype is None and isinstance(arrays, Seq) and arrays.items and isinstance(arrays.items[0], ArrayV):
        dtype = arrays.items[0].dtype
    return _global_array(call, dtype)


def _global_array(call: CallArgs, dtype: DType | None) -> ArrayV:
    """The array of global shape `shape` (the first argument) laid out by `sharding` (the
    second) that both constructors from per-device data build."""
    target = sharding_of(call.get(1, "sharding"))
    return ArrayV(shape_of(call.get(0, "shape")), dtype, target, placed=target is not None)


@calls("jax.make_array_from_process_local_data")
def _from_process_local_data(call: CallArgs) -> Value | None:
    """`make_array_from_process_local_data(sharding, local_data, global_shape=None)`: the global
    shape is `global_shape` when given, else (on one process, where JAX device_puts the local data)
    the local data's shape."""
    local = call.get(1, "local_data")
    if not isinstance(local, ArrayV):
        return None
    target = sharding_of(call.get(0, "sharding"))
    given = call.get(2, "global_shape")
    if given is None or (isinstance(given, Const) and given.value is None):
        shape = None if local.shape is None else tuple(_on_one_process(d) for d in local.shape)
    else:
        shape = shape_of(given)
    return ArrayV(shape, local.dtype, target or local.sharding, placed=target is not None)


ONE_PROCESS = "a single process (no global_shape: the local data is then the whole array)"


def _on_one_process(size: Value) -> Value:
    """A local size taken as the global one: with several processes a sharded dimension is larger,
    so a problem it decides is an assumption's, not a fact's."""
    if not isinstance(size, Const) or (size.origin is not None and size.origin.assumed):
        return size
    text = size.origin.describe() if size.origin is not None else "local data"
    return replace(size, origin=Origin(f"{text}, if one process", assumption=ONE_PROCESS))


@calls("jax.set_mesh", "jax.sharding.use_abstract_mesh")
def _set_mesh(call: CallArgs) -> Value | None:
    mesh = call.get(0, "mesh")
    if isinstance(mesh, Choice) and all(isinstance(option, MeshV) for option in options(mesh)):
        return mesh  # one of several meshes is made current (`with` reads which one is not known)
    return mesh if isinstance(mesh, MeshV) else None


@subscripts
def _spec_items(base: Value, index: Value | slice) -> Value | None:
    """`spec[0]`, `spec[1:]` and `*spec`: a spec's entries as values (maxtext's
    `P(activation_pspec[0], None)`). An entry the spec could not resolve stays unknown, never
    `None`; JAX raises on an index, a slice or `*` of a spec with reduced or unreduced axes
    (`spec.partitions[...]` is the way there), so that has no value."""
    if not isinstance(base, SpecV):
        return None
    if base.spec.reduced or base.spec.unreduced:
        return Unknown("indexing a spec with reduced or unreduced axes raises in JAX")
    unknown = set(base.unknown_entries)
    entries = tuple(
        Unknown("spec entry unknown") if i in unknown else _entry_value(e)
        for i, e in enumerate(base.spec.entries)
    )
    if isinstance(index, slice):
        return Seq(entries[index])
    position = as_int(index)
    if position is None:
        return None
    return entries[position] if -len(entries) <= position < len(entries) else Unknown("index out of range")


def _entry_value(entry: SpecEntry) -> Value:
    if entry is UNCONSTRAINED:
        return Ref("jax.sharding.PartitionSpec.UNCONSTRAINED")
    if isinstance(entry, tuple):
        return Seq(tuple(Const(a) for a in entry))
    return Const(entry)
