"""The paths of a pytree's leaves, as JAX and Flax spell them, for the rule tables real code
matches against them: `jax.tree_util.tree_map_with_path(f, tree)` (`f(path, leaf)`, a path being
a tuple of `DictKey`/`SequenceKey`/`GetAttrKey`), `jax.tree_util.keystr(path)`,
`tree_flatten_with_path`/`tree_leaves_with_path`, and `flax.traverse_util.flatten_dict(tree,
sep='/')` (`{'params/wte/embedding': leaf}`).

A key's attributes (`key.key`, `key.idx`, `key.name`), `str(key)` and `isinstance(key,
jax.tree_util.DictKey)` are known, so that a helper that joins a path into a string
(EasyLM's `tree_path_to_string`) gives the string JAX would. The tree must be known as
`pytrees.mapped` knows it; a subtree that is not known gives no paths (the whole answer is then
unknown, never a list with leaves missing).
"""

from __future__ import annotations

from dataclasses import dataclass

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.linen_specs import PartitionedV
from shardls.analysis.library.nnx_variables import VariableV
from shardls.analysis.library.pytrees import MAX_NESTING, map_tree
from shardls.analysis.library.registry import attributes, calls
from shardls.analysis.library.train_state import StructV
from shardls.analysis.values import ArrayV, Const, DictV, Seq, Unknown, Value, as_str

KEY_KINDS = ("DictKey", "SequenceKey", "GetAttrKey")
_ATTRIBUTE = {"DictKey": "key", "SequenceKey": "idx", "GetAttrKey": "name"}


@dataclass(frozen=True)
class KeyV(Value):
    """One entry of a key path: `DictKey(key)`, `SequenceKey(idx)` or `GetAttrKey(name)`."""

    kind: str
    key: Const

    def text(self) -> str:
        """`str(key)`, as JAX writes it: `['wte']`, `[0]`, `.value`."""
        if self.kind == "DictKey":
            return f"[{self.key.value!r}]"
        if self.kind == "SequenceKey":
            return f"[{self.key.value!s}]"
        return f".{self.key.value!s}"

    def simple(self) -> str:
        """The key alone (`keystr(..., simple=True)`)."""
        return str(self.key.value)


def is_key(value: Value, qualname: str) -> bool:
    """`isinstance(value, jax.tree_util.<kind>)`."""
    return isinstance(value, KeyV) and qualname.endswith(f".{value.kind}")


KEY_QUALNAMES = tuple(f"{module}.{kind}" for module in ("jax.tree_util", "jax.tree") for kind in KEY_KINDS)


@attributes(KeyV)
def _key_attribute(
    library: Library, evaluator: object, base: Value, attr: str, frame: object
) -> Value | None:
    if isinstance(base, KeyV) and _ATTRIBUTE[base.kind] == attr:
        return base.key
    return None


@calls("jax.tree_util.keystr")
def _keystr(call: CallArgs) -> Value | None:
    path = call.get(0, "keys")
    simple, separator = call.get(None, "simple") or Const(False), call.get(None, "separator") or Const("")
    if not isinstance(path, Seq) or not all(isinstance(k, KeyV) for k in path.items):
        return Unknown("keystr() of a path not known here")
    if not isinstance(simple, Const) or as_str(separator) is None:
        return Unknown("keystr() with options not known here")
    keys = [k for k in path.items if isinstance(k, KeyV)]
    if simple.value:
        return Const(str(as_str(separator)).join(k.simple() for k in keys))
    return Const(str(as_str(separator)).join(k.text() for k in keys))


@calls("jax.tree_util.tree_map_with_path", "jax.tree.map_with_path")
def _map_with_path(call: CallArgs) -> Value | None:
    return map_tree(call, with_path=True)


class _NoPaths(Exception):
    """Part of the tree is not known: its leaves and their paths are not either."""


def _leaves(tree: Value, path: tuple[KeyV, ...], found: list[tuple[tuple[KeyV, ...], Value]]) -> None:
    """The leaves of a known tree with their paths, in JAX's order (a dict's keys sorted)."""
    if len(path) > MAX_NESTING or len(found) > 10_000:
        raise _NoPaths
    if isinstance(tree, Const) and tree.value is None:
        return
    if isinstance(tree, DictV):
        keys = [k for k in tree.keys if isinstance(k, Const)]
        if len(keys) != len(tree.keys) or len({type(k.value) for k in keys}) > 1:
            raise _NoPaths
        for key, value in sorted(zip(keys, tree.values), key=lambda kv: kv[0].value):  # type: ignore[arg-type,return-value]
            _leaves(value, (*path, KeyV("DictKey", key)), found)
    elif isinstance(tree, Seq):
        for index, item in enumerate(tree.items):
            _leaves(item, (*path, KeyV("SequenceKey", Const(index))), found)
    elif isinstance(tree, (VariableV, PartitionedV)):
        _leaves(tree.value, (*path, KeyV("GetAttrKey", Const("value"))), found)
    elif isinstance(tree, StructV):
        for name, child in tree.children:
            _leaves(child, (*path, KeyV("GetAttrKey", Const(name))), found)
    elif isinstance(tree, (ArrayV, Const)):
        found.append((path, tree))
    else:
        raise _NoPaths


def _with_paths(tree: Value | None) -> Seq | None:
    found: list[tuple[tuple[KeyV, ...], Value]] = []
    try:
        _leaves(tree if tree is not None else Unknown("no tree"), (), found)
    except _NoPaths:
        return None
    return Seq(tuple(Seq((Seq(path), leaf)) for path, leaf in found), is_list=True)


@calls("jax.tree_util.tree_leaves_with_path", "jax.tree.leaves_with_path")
def _leaves_with_path(call: CallArgs) -> Value | None:
    if call.get(None, "is_leaf") is not None:
        return None
    return _with_paths(call.get(0, "tree")) or Unknown("the leaves of a tree not known here")


@calls("jax.tree_util.tree_flatten_with_path", "jax.tree.flatten_with_path")
def _flatten_with_path(call: CallArgs) -> Value | None:
    if call.get(None, "is_leaf") is not None:
        return None
    leaves = _with_paths(call.get(0, "tree"))
    if leaves is None:
        return Unknown("the leaves of a tree not known here")
    return Seq((leaves, Unknown("a tree's structure")))


@calls("flax.traverse_util.flatten_dict")
def _flatten_dict(call: CallArgs) -> Value | None:
    """Flax's `flatten_dict`: nested dicts to one dict keyed by tuples of keys, or by the keys
    joined with `sep=`; empty dicts are dropped (`keep_empty_nodes=False`), anything that is not
    a dict is a leaf. A leaf that is not known may be a dict: the result is then unknown."""
    tree, sep = call.get(0, "xs"), call.get(3, "sep")
    separator = None if sep is None or (isinstance(sep, Const) and sep.value is None) else as_str(sep)
    if call.get(1, "keep_empty_nodes") is not None or call.get(2, "is_leaf") is not None:
        return None
    if sep is not None and separator is None and not (isinstance(sep, Const) and sep.value is None):
        return Unknown("flatten_dict() with a separator not known here")
    keys: list[Value] = []
    values: list[Value] = []
    stack: list[tuple[tuple[Const, ...], Value]] = [((), tree if tree is not None else Unknown("no tree"))]
    while stack:
        path, node = stack.pop()
        if isinstance(node, DictV):
            if len(path) > MAX_NESTING or not all(isinstance(k, Const) for k in node.keys):
                return Unknown("flatten_dict() of a tree not known here")
            stack.extend(
                ((*path, k), v)
                for k, v in reversed(list(zip(node.keys, node.values)))
                if isinstance(k, Const)
            )
        elif isinstance(node, (ArrayV, Const, VariableV, PartitionedV, Seq)) and path:
            if separator is None:
                keys.append(Seq(path))
            elif all(isinstance(k.value, str) for k in path):
                keys.append(Const(separator.join(str(k.value) for k in path)))
            else:
                return Unknown("flatten_dict() joining keys that are not strings")
            values.append(node)
        else:
            return Unknown("flatten_dict() of a tree not known here")
    return DictV(tuple(keys), tuple(values))
