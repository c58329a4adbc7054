"""`jax.tree.map` (and `jax.tree_util.tree_map`, `jax.tree_map`) over trees whose structure is
known: tuples, lists and dicts of specs, shardings or arrays.

Real code builds its sharding trees this way (`jax.tree.map(lambda s: NamedSharding(mesh, s),
specs)`) and transforms its parameter trees (`jax.tree.map(lambda x: x.astype(dtype), params)`).
The function is applied to each leaf (a lambda's body is evaluated with its parameters bound to
the leaves), and the result has the tree's structure. A leaf whose value is not known may itself
be a subtree, so the result is unknown there rather than a guess (the rest of the tree keeps its
known leaves); so is anything under a custom pytree node (a dataclass instance) and any subtree
whose `is_leaf=` the evaluator cannot decide. A tree shared
by reference (`[[x] * 1000] * 1000`) or nested too deeply is not mapped: the nodes visited are
bounded by the evaluator's collection limit and the nesting by `MAX_NESTING`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace

from shardls.analysis.evaluator import truthiness
from shardls.analysis.library import CallArgs
from shardls.analysis.library.nnx_variables import VariableV
from shardls.analysis.library.registry import calls
from shardls.analysis.library.train_state import StructV
from shardls.analysis.values import ArrayV, Choice, Const, DictV, InstanceV, Seq, Unknown, Value

_TREE_MAPS = ("jax.tree.map", "jax.tree_util.tree_map", "jax.tree_map")
MAX_NESTING = 64


Leaf = Callable[[Value], Value]


def _key(path: tuple[Value, ...] | None, kind: str, key: Value) -> tuple[Value, ...] | None:
    """`path` one key further down (None when that key is not a known constant)."""
    from shardls.analysis.library.key_paths import KeyV

    if path is None or not isinstance(key, Const):
        return None
    return (*path, KeyV(kind, key))


def mapped(tree: Value | None, leaf: Leaf, depth: int = 0, variables: bool = False) -> Value:
    """`jax.tree.map` of `leaf` over a tree of known structure: dicts, tuples and lists are
    nodes, an NNX variable a node around its value (with `variables`, a leaf itself: what
    `nnx.get_partition_spec` maps), `None` an empty subtree; each option of a choice."""
    if tree is None:
        return Unknown("no tree given")
    if depth > MAX_NESTING:
        return Unknown("a tree nested too deeply")
    if isinstance(tree, DictV):
        return DictV(tree.keys, tuple(mapped(value, leaf, depth + 1, variables) for value in tree.values))
    if isinstance(tree, Seq):
        return Seq(tuple(mapped(item, leaf, depth + 1, variables) for item in tree.items), tree.is_list)
    if isinstance(tree, Choice):
        return Choice(tuple(mapped(option, leaf, depth + 1, variables) for option in tree.options))
    if isinstance(tree, VariableV) and not variables:
        return replace(tree, value=mapped(tree.value, leaf, depth + 1))
    if isinstance(tree, StructV):
        return tree.with_children(
            tuple(mapped(child, leaf, depth + 1, variables) for _, child in tree.children)
        )
    if isinstance(tree, Const) and tree.value is None:
        return tree
    return leaf(tree)


class _Unmappable(Exception):
    """The trees' structure is not known well enough to map over."""


@calls(*_TREE_MAPS)
def _tree_map(call: CallArgs) -> Value | None:
    return map_tree(call, with_path=False)


def map_tree(call: CallArgs, with_path: bool) -> Value | None:
    """`jax.tree.map(f, tree, *rest)`, or with `with_path` `jax.tree_util.tree_map_with_path`,
    whose `f` takes each leaf's key path first (a tuple of `key_paths.KeyV`)."""
    if len(call.args) < 2:
        return None
    function, trees = call.args[0], call.args[1:]
    mapper = _Mapper(call, function, with_path)
    try:
        return mapper.map(trees[0], trees[1:])
    except _Unmappable as reason:
        return Unknown(f"jax.tree.map over {reason}")


class _Mapper:
    """Applies the function leaf by leaf, keeping the first tree's structure."""

    def __init__(self, call: CallArgs, function: Value, with_path: bool = False) -> None:
        self.call = call
        self.function = function
        node = call.arg_node(0, "f")
        self.lambda_node = node if isinstance(node, ast.Lambda) else None
        is_leaf = call.get(None, "is_leaf")
        self.is_leaf = (
            None if is_leaf is None or (isinstance(is_leaf, Const) and is_leaf.value is None) else is_leaf
        )
        is_leaf_node = call.arg_node(None, "is_leaf")
        self.is_leaf_node = is_leaf_node if isinstance(is_leaf_node, ast.Lambda) else None
        self.with_path = with_path
        self.nodes_left = call.evaluator.limits.collection

    def map(
        self, tree: Value, rest: list[Value], depth: int = 0, path: tuple[Value, ...] | None = ()
    ) -> Value:
        """`path` is the keys down to `tree` (None once a key on the way is not known)."""
        self.nodes_left -= 1
        if self.nodes_left < 0 or depth > MAX_NESTING:
            raise _Unmappable("a tree too large or too deep")
        if self.is_leaf is not None:
            leaf = self._is_leaf(tree)
            if leaf is None:
                return Unknown("jax.tree.map where its is_leaf= cannot be decided")
            if leaf:
                return self._apply([tree, *rest], path)
        if isinstance(tree, Const) and tree.value is None:
            return tree  # None is an empty subtree
        if isinstance(tree, Seq):
            others = [self._children(other, len(tree.items)) for other in rest]
            items = tuple(
                self.map(
                    item, [children[i] for children in others], depth + 1, _key(path, "SequenceKey", Const(i))
                )
                for i, item in enumerate(tree.items)
            )
            return Seq(items, tree.is_list)
        if isinstance(tree, DictV):
            values = tuple(
                self.map(
                    value, [self._value(other, key) for other in rest], depth + 1, _key(path, "DictKey", key)
                )
                for key, value in zip(tree.keys, tree.values)
            )
            return DictV(tree.keys, values)
        if isinstance(tree, VariableV):  # a node with one child, its value (`nnx.Variable`)
            if not all(isinstance(other, VariableV) for other in rest):
                raise _Unmappable("trees of different structures")
            children = [other.value for other in rest if isinstance(other, VariableV)]
            return replace(tree, value=self.map(tree.value, children, depth + 1, None))
        if isinstance(tree, StructV):  # a Flax struct (`TrainState`): a node of named children
            if not all(tree.same_node(other) for other in rest):
                raise _Unmappable("trees of different structures")
            return tree.with_children(
                tuple(
                    self.map(
                        child,
                        [
                            c
                            for other in rest
                            if isinstance(other, StructV) and (c := other.child(name)) is not None
                        ],
                        depth + 1,
                        _key(path, "GetAttrKey", Const(name)),
                    )
                    for name, child in tree.children
                )
            )
        if isinstance(tree, (Unknown, InstanceV)):  # maybe a subtree: unknown here, known elsewhere
            return Unknown("jax.tree.map over a subtree whose structure is not known")
        return self._apply([tree, *rest], path)

    def _children(self, other: Value, length: int) -> tuple[Value, ...]:
        if isinstance(other, Seq) and len(other.items) == length:
            return other.items
        raise _Unmappable("trees of different structures")

    def _value(self, other: Value, key: Value) -> Value:
        found = other.get(key.value) if isinstance(other, DictV) and isinstance(key, Const) else None
        if found is None:
            raise _Unmappable("trees of different structures")
        return found

    def _is_leaf(self, tree: Value) -> bool | None:
        """What `is_leaf(tree)` answers; None when it cannot be decided for this subtree."""
        if self.is_leaf_node is not None:
            return truthiness(self._lambda(self.is_leaf_node, [tree]))
        call = self.call
        assert self.is_leaf is not None
        return truthiness(call.evaluator.call(self.is_leaf, [tree], {}, call.node, call.frame))

    def _apply(self, leaves: list[Value], path: tuple[Value, ...] | None) -> Value:
        if self.with_path:
            leaves = [Seq(path) if path is not None else Unknown("a key path not known here"), *leaves]
        if self.lambda_node is not None:
            return self._lambda(self.lambda_node, leaves)
        call = self.call
        return call.evaluator.call(self.function, leaves, {}, call.node, call.frame)

    def _lambda(self, node: ast.Lambda, leaves: list[Value]) -> Value:
        """A lambda's body with its parameters bound to the leaves (`lambda *xs: ...` too)."""
        args = node.args
        names = [a.arg for a in [*args.posonlyargs, *args.args]]
        if len(leaves) < len(names) or (len(leaves) > len(names) and args.vararg is None):
            raise _Unmappable("a function that does not take one leaf of each tree")
        bound: dict[str, Value] = dict(zip(names, leaves))
        if args.vararg is not None:
            bound[args.vararg.arg] = Seq(tuple(leaves[len(names) :]))
        frame = self.call.frame
        return self.call.evaluator.evaluate(node.body, replace(frame, locals={**frame.locals, **bound}))


@calls("jax.block_until_ready")
def _block_until_ready(call: CallArgs) -> Value | None:
    """`jax.block_until_ready(x)` waits for `x` and returns it, any pytree (maxtext
    examples/shardings.py: `presharded_X = jax.block_until_ready(jit_gen_data(key))`)."""
    return call.get(0, "x")


@calls("jax.device_get")
def _device_get(call: CallArgs) -> Value | None:
    """`jax.device_get(x)`: the tree with each array copied to the host (numpy arrays of the same
    shape and dtype, no longer laid out on devices)."""
    tree = call.get(0, "x")
    if tree is None:
        return None
    return mapped(tree, lambda leaf: ArrayV(leaf.shape, leaf.dtype) if isinstance(leaf, ArrayV) else leaf)
