"""The variables an NNX module holds, as Flax 0.12 nests them: a dict by attribute name (list
items by index, `nnx.Dict` items by key), leaves the variables themselves (`VariableV`).

This is what `nnx.state(model)` returns (`nnx_state.py`). Nothing is run: a workspace module's
attributes are the evaluator's values of its `self.x = ...` in `__init__`, a Flax layer's
parameters are the recognizers' shape formulas (`layer_params`, the same as its sites'), and an
`nnx.Param(...)` is its own value. Flax leaves out attributes that hold no selected variable
(numbers, configs, meshes, modules without parameters), and so does this tree; an attribute whose
value is not known may hold a module, so its entry is unknown rather than left out, and a module
whose `__init__` sets attributes shardls cannot see (a method called on `self`, a list filled by
`append`) gets an entry with an unknown key: a lookup of a missing name is then unknown, never a
`KeyError`, and a `jax.tree.map` over the whole tree is unknown rather than a tree with holes.

"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from shardls.analysis.definitions import ClassInfo, method_defs
from shardls.analysis.evaluation.objects import note_method
from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.library import CallArgs
from shardls.analysis.library.nnx import RngsV
from shardls.analysis.library.nnx_variables import VARIABLE_KINDS, VariableV, stacked_creation
from shardls.analysis.node_memo import per_node
from shardls.analysis.sharded.layers import LayerV
from shardls.analysis.values import (
    ArrayV,
    Choice,
    ClassV,
    Const,
    DictV,
    DTypeV,
    FunctionV,
    InitializerV,
    InstanceV,
    MeshV,
    Ref,
    Seq,
    ShardingV,
    SpecV,
    TransformedV,
    Unknown,
    Value,
    options,
)
from shardls.core import FLOAT32

MODULE = "flax.nnx.Module"
MAX_DEPTH = 12
"""Modules nested deeper than this give an unknown subtree."""
Kinds = frozenset[str]
"""The variable types selected (`Param`, `BatchStat`, ...); `OTHER_KINDS` stands for the types
shardls does not model (the rngs' stream variables, ...)."""
OTHER_KINDS = "*"
EVERY_KIND: Kinds = frozenset({*VARIABLE_KINDS, OTHER_KINDS})
_STATIC = (Const, MeshV, SpecV, ShardingV, Ref, ClassV, FunctionV, DTypeV, InitializerV, TransformedV)
"""Values Flax keeps as static attributes: never variables, never modules."""
_PYTREE_LIBRARIES = ("flax.", "jax.", "equinox.", "chex.")
"""A class deriving from one of these (`nnx.Pytree`, `nnx.Optimizer`, `struct.PyTreeNode`) may
hold variables or arrays Flax walks."""
_PYTREE_DECORATORS = ("register_dataclass", "register_pytree_node_class", "register_pytree_with_keys_class")
"""Decorators that make a class a pytree (as does `@flax.struct.dataclass`): not static."""
_BUILDERS = ("__init__", "__post_init__", "setup")
_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "pop"})


@dataclass(frozen=True, eq=False)
class FlaxLayerV(Value):
    """`nnx.Linear(...)` (a layer of the recognizers' table) made where no types are recorded
    (in the typing pass the sharded `LayerV` stands for it): its call, whose parameters the
    recognizers' `layer_params` lists."""

    call: CallArgs


class TreeBuilder:
    """Builds the tree of one `nnx.state(...)` question."""

    def __init__(self, evaluator: Evaluator, frame: Frame, kinds: Kinds) -> None:
        self.evaluator = evaluator
        self.frame = frame
        self.kinds = kinds

    def state(self, value: Value, depth: int = 0) -> Value | None:
        """The subtree `value` holds; None when it holds no selected variable."""
        if depth > MAX_DEPTH:
            return Unknown("modules nested too deeply to follow")
        if isinstance(value, Choice):
            return self._either([self.state(option, depth) for option in options(value)])
        if isinstance(value, VariableV):
            return value if value.kind in self.kinds else None
        if isinstance(value, (FlaxLayerV, LayerV)):
            if stacked_creation(value.call.frame):
                return Unknown("a layer made under nnx.vmap/nnx.scan, whose stacked axis is not known here")
            return self._layer(value.call)
        if isinstance(value, InstanceV):
            return self._instance(value, depth)
        if isinstance(value, Seq):
            return _nested([(Const(i), self.state(item, depth + 1)) for i, item in enumerate(value.items)])
        if isinstance(value, DictV):
            return _nested([(k, self.state(v, depth + 1)) for k, v in zip(value.keys, value.values)])
        if isinstance(value, (ArrayV, RngsV)):
            # a bare array (`nnx.data(x)`) or the rngs' stream variables: no parameter
            return None if self._params_only else Unknown("variables other than parameters")
        if isinstance(value, _STATIC):
            return None
        if isinstance(value, Unknown):
            return Unknown(f"an attribute that may hold variables: {value.reason}", symbol=value.symbol)
        return Unknown("an attribute shardls does not model")

    @property
    def _params_only(self) -> bool:
        return self.kinds <= {"Param"}

    def _either(self, states: list[Value | None]) -> Value | None:
        """Both branches of a condition: the same tree, or a choice; unknown when only some
        branches hold variables (whether the entry exists is not known)."""
        present = [s for s in states if s is not None]
        if not present:
            return None
        if len(present) < len(states):
            return Unknown("variables held on some paths only")
        unique: list[Value] = []
        for tree in present:
            if tree not in unique:
                unique.append(tree)
        return unique[0] if len(unique) == 1 else Choice(tuple(unique))

    def _layer(self, call: CallArgs) -> Value | None:
        from shardls.analysis.recognizers.nnx.params import layer_params

        kind = call.qualname.rsplit(".", 1)[-1]
        leaves: list[tuple[str, Value]] = []
        if "Param" in self.kinds:
            unread = call.get(None, "param_dtype") is not None
            for param in layer_params(call):
                dtype = param.dtype or (None if unread else FLOAT32)
                leaves.append((param.name, VariableV("Param", ArrayV(param.shape, dtype), param.annotation)))
        if kind == "BatchNorm" and "BatchStat" in self.kinds:
            features = call.get(0, "num_features") or Unknown("num_features", symbol="num_features")
            leaves += [
                (name, VariableV("BatchStat", ArrayV((features,), FLOAT32))) for name in ("mean", "var")
            ]
        tree = _from_paths(leaves)
        if kind == "MultiHeadAttention" and "Cache" in self.kinds:
            return _opened(tree, "the decode cache `init_cache` adds")
        return tree

    def _instance(self, instance: InstanceV, depth: int) -> Value | None:
        evaluator, frame = self.evaluator, self.frame
        bases = evaluator.base_qualnames(instance.cls, frame)
        classes = evaluator.mro(instance.cls, frame)
        unseen = any(_unseen_base(evaluator, klass, frame) for klass in classes)
        if MODULE not in bases:
            if unseen or any(b.startswith(_PYTREE_LIBRARIES) for b in bases) or _registered(classes):
                return Unknown(f"{instance.cls.name} may be a pytree or graph node holding variables")
            return None  # a plain object (a config) is static to Flax
        if bases - {MODULE} or unseen:
            return Unknown(f"{instance.cls.name} also derives from a class shardls does not model")
        names = sorted({name for klass in classes for name in klass.self_assignments})
        for klass in classes:
            note_method(evaluator, klass, "*")  # `_assigned_later` reads every method's body
        later = {name for klass in classes for name in _assigned_later(klass)}
        mutated = {name for klass in classes for name in _mutated(klass)} | later
        entries: list[tuple[Value, Value | None]] = []
        for name in names:
            if name in mutated:
                entries.append((Const(name), Unknown(f"self.{name} is changed after it is assigned")))
                continue
            value = evaluator.instance_attribute(instance, name, frame)
            entries.append((Const(name), self.state(value, depth + 1)))
        tree = _nested(entries)
        methods = {name for klass in classes for name in klass.methods}
        hidden = next(
            (why for klass in classes if (why := _sets_elsewhere(klass, methods)) is not None), None
        )
        if hidden is None and not later <= set(names):
            hidden = f"attributes {instance.cls.name}'s other methods set"
        return _opened(tree, hidden) if hidden is not None else tree


def _registered(classes: list[ClassInfo]) -> bool:
    """Whether a class is declared a pytree (`@struct.dataclass`, `@jax.tree_util.register_dataclass`)."""
    return any(
        d.rsplit(".", 1)[-1] in _PYTREE_DECORATORS or d.endswith("struct.dataclass")
        for klass in classes
        for d in klass.decorators
    )


def _nested(entries: list[tuple[Value, Value | None]]) -> DictV | None:
    """A dict of the entries that hold variables; None when none does (Flax drops the subtree)."""
    kept = [(key, value) for key, value in entries if value is not None]
    if not kept:
        return None
    return DictV(tuple(k for k, _ in kept), tuple(v for _, v in kept))


def _from_paths(leaves: list[tuple[str, Value]]) -> DictV | None:
    """`[("query.kernel", k), ("query.bias", b)]` -> `{"query": {"kernel": k, "bias": b}}`."""
    groups: dict[str, list[tuple[str, Value]]] = {}
    direct: dict[str, Value] = {}
    for path, leaf in leaves:
        head, _, rest = path.partition(".")
        if rest:
            groups.setdefault(head, []).append((rest, leaf))
        else:
            direct[head] = leaf
    entries: list[tuple[Value, Value | None]] = [(Const(k), v) for k, v in direct.items()]
    entries += [(Const(k), _from_paths(group)) for k, group in groups.items()]
    return _nested(sorted(entries, key=lambda entry: str(_key_text(entry[0]))))


def _key_text(key: Value) -> object:
    return key.value if isinstance(key, Const) else ""


def _opened(tree: DictV | None, why: str) -> DictV:
    """The tree with an entry whose key is not known: more variables than those listed may exist."""
    hidden = Unknown(f"variables shardls cannot see: {why}")
    if tree is None:
        return DictV((hidden,), (hidden,))
    return DictV((*tree.keys, hidden), (*tree.values, hidden))


def _builders(klass: ClassInfo) -> tuple[ast.AST, ...]:
    """The nodes of the methods that build an instance: read for every instance of the class
    `state` meets (each layer of a model), so found once per class."""
    return _builder_nodes(klass.node)


@per_node
def _builder_nodes(node: ast.ClassDef) -> tuple[ast.AST, ...]:
    methods = method_defs(node)
    return tuple(inner for name in _BUILDERS if name in methods for inner in ast.walk(methods[name]))


def _sets_elsewhere(klass: ClassInfo, methods: set[str]) -> str | None:
    """Why the class's constructor may set attributes its own `self.x = ...` lines do not show:
    one of the class's `methods` called on `self` (not an attribute holding a function, such as
    `self.kernel_init(...)`), or `setattr` with a computed name."""
    for node in _builders(klass):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        method = _self_attribute(func)
        if method is not None and method in methods:
            return f"self.{method}(...) in {klass.name}"
        named = len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
        if isinstance(func, ast.Name) and func.id == "setattr" and not named:
            return f"setattr(self, ...) with a computed name in {klass.name}"
    return None


def _assigned_later(klass: ClassInfo) -> frozenset[str]:
    """Attributes a method other than the constructor assigns (`def init_cache(self): self.cache
    = nnx.Cache(...)`): when `nnx.state` runs, they may hold something else, or be new. Found
    once per class, as `_builders`."""
    return _assigned_outside_builders(klass.node)


@per_node
def _assigned_outside_builders(klass: ast.ClassDef) -> frozenset[str]:
    found: set[str] = set()
    for name, method in method_defs(klass).items():
        if name in _BUILDERS:
            continue
        for node in ast.walk(method):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found |= {attr for t in targets if (attr := _self_attribute(t)) is not None}
    return frozenset(found)


def _mutated(klass: ClassInfo) -> set[str]:
    """Attributes the constructor changes in place (`self.layers.append(...)`, `self.d[k] = v`)."""
    changed: list[ast.AST] = []
    for node in _builders(klass):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS
        ):
            changed.append(node.func.value)
        elif isinstance(node, ast.Assign):
            changed += [t.value for t in node.targets if isinstance(t, ast.Subscript)]
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript):
            changed.append(node.target.value)
    return {name for target in changed if (name := _self_attribute(target)) is not None}


def _self_attribute(node: ast.AST) -> str | None:
    """`x` for `self.x`."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _unseen_base(evaluator: Evaluator, klass: ClassInfo, frame: Frame) -> bool:
    """A base class that is neither a workspace class nor a library one (an import shardls
    cannot resolve): what it adds to the module is not known."""
    for base in klass.node.bases:
        base_frame = Frame(klass.module, klass.parent, klass.segment, None, {}, frame.call_depth)
        if not isinstance(evaluator.eval(base, base_frame), (ClassV, Ref)):
            return True
    return False
