"""Flax NNX shardings given per variable: `nnx.StateSharding({filter: sharding, ...})`,
`nnx.prefix(node, {filter: sharding, ...})` and the filters they read (`nnx.PathContains`,
`nnx.PathIn`, variable types, `nnx.All`/`Any`/`Not`, `...`).

`nnx.jit`, `nnx.shard_map` and `nnx.jit_partial` take graph nodes (modules, variables) as
arguments and lay out each variable of such an argument by the pytree prefix given for it: one
sharding for the whole module, or a `StateSharding` whose first matching filter decides, per
variable, by its path and type (Flax 0.12 `extract.check_consistent_aliasing` /
`StateSharding.map_prefix`). `nnx.prefix(node, mapping)` builds the same choice as a tree shaped
like `node`; paired with the argument it was made for, it gives each variable the sharding its
first matching filter gives, which is what this module models it as. A module passed is read as
its state (`nnx_tree.py`): `GraphStateV`, so the pairing of wrapped.py can walk its variables
with their paths. A filter written as a function of the path and the variable is evaluated for
each variable (`nnx_predicates`). A filter shardls cannot read (a tag, a function whose answer is
not known) leaves the variables it might match without a sharding: never a guess.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.library import CallArgs
from shardls.analysis.library.nnx_predicates import PredicateV, predicate
from shardls.analysis.library.nnx_tree import EVERY_KIND, MODULE, FlaxLayerV, TreeBuilder
from shardls.analysis.library.nnx_variables import VARIABLE_KINDS, VariableV
from shardls.analysis.library.registry import calls
from shardls.analysis.sharded.layers import LayerV
from shardls.analysis.values import Const, DictV, InstanceV, Origin, Ref, Seq, Unknown, Value

Path = tuple[object, ...]
"""A variable's path in its module's state: attribute names, list indices, dict keys."""
_FILTERS = ("PathContains", "PathIn", "All", "Any", "Not", "Everything", "Nothing", "OfType", "WithTag")
_STATE = Origin("nnx.State")
"""Marks the tree an `nnx.State(...)` wraps: given to `StateSharding`, its keys are paths, while
the keys of a plain dict are filters (a string a tag)."""
_MAX_DEPTH = 3
"""How deep in a tuple or dict of arguments a module is looked for."""


@dataclass(frozen=True)
class FilterV(Value):
    """An `nnx.PathContains('kernel')`, `nnx.All(...)`, ... filter with its arguments."""

    name: str
    args: tuple[Value, ...]
    exact: Value | None = None
    """`PathContains(key, exact=...)`; None when not given (exact)."""


@dataclass(frozen=True)
class StateShardingV(Value):
    """`nnx.StateSharding(...)` or `nnx.prefix(node, mapping)`: the sharding of a variable is that
    of the first filter that selects it."""

    filters: tuple[Value, ...]
    shardings: tuple[Value, ...]

    def for_variable(self, path: Path, variable: VariableV) -> Value | None:
        """The sharding Flax gives this variable; None when a filter before the one that selects
        it cannot be read (or none selects it: Flax then raises)."""
        for written, sharding in zip(self.filters, self.shardings):
            selected = selects(written, path, variable)
            if selected is None:
                return None
            if selected:
                return sharding
        return None


@dataclass(frozen=True)
class GraphStateV(Value):
    """A graph node passed to an NNX transform, as the state whose variables the transform lays
    out (`nnx_tree.py`'s tree of `VariableV` leaves)."""

    tree: DictV

    def variables(self) -> Iterator[tuple[Path, VariableV]]:
        """Each variable the tree shows, with its path (entries of unknown key or value are
        left out: their variables are not known)."""
        for path, leaf in _leaves(self.tree, ()):
            if path is not None and isinstance(leaf, VariableV):
                yield path, leaf


def path_label(path: Path) -> str:
    """`.kernel`, `.layers.0.bias`: how Flax prints a variable's path after the argument's name."""
    return "".join(f".{part}" for part in path)


def graph_states(evaluator: Evaluator, frame: Frame, value: Value | None, depth: int = 0) -> Value | None:
    """`value` with each module in it (also inside tuples and dicts) replaced by its state, as
    an NNX transform lays its variables out; anything else is kept."""
    if value is None or depth > _MAX_DEPTH:
        return value
    if isinstance(value, (FlaxLayerV, LayerV)) or (
        isinstance(value, InstanceV) and MODULE in evaluator.base_qualnames(value.cls, frame)
    ):
        tree = TreeBuilder(evaluator, frame, EVERY_KIND).state(value)
        return GraphStateV(tree) if isinstance(tree, DictV) else Unknown("the state of a module")
    if isinstance(value, Seq):
        return Seq(tuple(graph_states(evaluator, frame, item, depth + 1) or item for item in value.items))
    if isinstance(value, DictV):
        values = tuple(graph_states(evaluator, frame, item, depth + 1) or item for item in value.values)
        return DictV(value.keys, values)
    return value


# -- filters -----------------------------------------------------------------------------------


def selects(written: Value, path: Path, variable: VariableV) -> bool | None:
    """Whether a filter selects the variable at `path` (Flax's `filterlib.to_predicate`); None
    when shardls cannot tell."""
    if isinstance(written, Const):
        if isinstance(written.value, bool) or written.value is None:
            return bool(written.value)
        return None  # a string is a tag filter; tags are not modelled
    if isinstance(written, Ref):
        return _of_type(written, variable)
    if isinstance(written, Seq):
        return _any(selects(item, path, variable) for item in written.items)
    if isinstance(written, FilterV):
        return _filter(written, path, variable)
    if isinstance(written, PredicateV):
        return written.selects(path, variable)
    return None


def _of_type(written: Ref, variable: VariableV) -> bool | None:
    if written.qualname == "builtins.Ellipsis":
        return True
    kind = written.qualname.removeprefix("flax.nnx.")
    if kind not in VARIABLE_KINDS:
        return None
    if kind == "Param" and variable.kind != "Param":
        return None  # `nnx.Variable` is read as `nnx.Param`: it may be the base of every kind
    return variable.kind == kind


def _filter(written: FilterV, path: Path, variable: VariableV) -> bool | None:
    name, args = written.name, written.args
    if name == "Everything":
        return True
    if name == "Nothing":
        return False
    if name == "PathContains":
        return _path_contains(written, path)
    if name == "PathIn":
        return _path_in(args, path)
    if name == "OfType":
        return _of_type(args[0], variable) if args and isinstance(args[0], Ref) else None
    if name == "Not":
        inner = selects(args[0], path, variable) if len(args) == 1 else None
        return None if inner is None else not inner
    found = [selects(item, path, variable) for item in args]
    return _any(found) if name == "Any" else _all(found) if name == "All" else None


def _path_contains(written: FilterV, path: Path) -> bool | None:
    key = written.args[0] if written.args else None
    exact = written.exact
    if not isinstance(key, Const) or not (exact is None or isinstance(exact, Const)):
        return None
    if exact is None or exact.value:
        return key.value in path
    return any(str(key.value) in str(part) for part in path)


def _path_in(args: tuple[Value, ...], path: Path) -> bool | None:
    paths: list[Path] = []
    for written in args:
        if not isinstance(written, Seq) or not all(isinstance(item, Const) for item in written.items):
            return None
        paths.append(tuple(item.value for item in written.items if isinstance(item, Const)))
    return path in paths


def _any(found: Iterator[bool | None] | list[bool | None]) -> bool | None:
    results = list(found)
    if any(result is True for result in results):
        return True
    return False if all(result is False for result in results) else None


def _all(results: list[bool | None]) -> bool | None:
    if any(result is False for result in results):
        return False
    return True if all(result is True for result in results) else None


@calls(*(f"flax.nnx.{name}" for name in _FILTERS))
def _filter_value(call: CallArgs) -> Value | None:
    name = call.qualname.rsplit(".", 1)[-1]
    exact = call.get(1, "exact") if name == "PathContains" else None
    if name == "PathContains":
        return FilterV(name, tuple(call.args[:1]), exact)
    return FilterV(name, tuple(predicate(call, arg, call.arg_node(i)) for i, arg in enumerate(call.args)))


# -- per-variable shardings ---------------------------------------------------------------------


@calls("flax.nnx.StateSharding")
def _state_sharding(call: CallArgs) -> Value | None:
    """`nnx.StateSharding({filter: sharding})`, a list of pairs, or a State of shardings (each
    path its own filter, as `statelib.create_path_filters` makes them)."""
    return _by_filters(call, call.get(0, "filter_sharding"), call.arg_node(0, "filter_sharding"))


@calls("flax.nnx.prefix")
def _prefix(call: CallArgs) -> Value | None:
    """`nnx.prefix(node, {filter: sharding})`; of a tuple of nodes, a tuple of prefixes (one per
    node, as Flax's tree is). A function as the mapping is not read."""
    mapping = call.get(1, "filter_map")
    prefix = (
        _by_filters(call, mapping, call.arg_node(1, "filter_map")) if isinstance(mapping, DictV) else None
    )
    node = call.get(0, "node")
    if prefix is not None and isinstance(node, Seq):
        return Seq((prefix,) * len(node.items))
    return prefix


@calls("flax.nnx.State")
def _state(call: CallArgs) -> Value | None:
    """`nnx.State({...})`: the nested mapping it wraps (a tree keyed as `nnx.state` keys it)."""
    given = call.get(0, "mapping")
    return DictV(given.keys, given.values, origin=_STATE) if isinstance(given, DictV) else None


def _by_filters(call: CallArgs, given: Value | None, node: ast.expr | None) -> StateShardingV | None:
    """The filters and their shardings of a mapping or list of pairs (`given`, written as
    `node`): a filter written as a function is read as one (`nnx_predicates`)."""
    if isinstance(given, Seq) and all(isinstance(item, Seq) and len(item.items) == 2 for item in given.items):
        pairs = [item.items for item in given.items if isinstance(item, Seq)]
        return StateShardingV(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs))
    if not isinstance(given, DictV):
        return None
    if given.origin == _STATE:
        return _by_paths(given)
    keys = node.keys if isinstance(node, ast.Dict) and len(node.keys) == len(given.keys) else ()
    filters = tuple(predicate(call, key, keys[i] if keys else None) for i, key in enumerate(given.keys))
    return StateShardingV(filters, given.values)


def _by_paths(tree: DictV) -> StateShardingV | None:
    """A State of shardings: each leaf's path is the filter that gives its sharding."""
    filters: list[Value] = []
    shardings: list[Value] = []
    for path, leaf in _leaves(tree, ()):
        if path is None:
            return None
        filters.append(FilterV("PathIn", (Seq(tuple(Const(part) for part in path)),)))
        shardings.append(leaf)
    return StateShardingV(tuple(filters), tuple(shardings))


def _leaves(tree: Value, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...] | None, Value]]:
    """The leaves of a nested mapping (a variable is a leaf) with their paths; None as the path
    of an entry whose key is not known."""
    if not isinstance(tree, DictV):
        yield path, tree
        return
    for key, value in zip(tree.keys, tree.values):
        if isinstance(key, Const) and isinstance(key.value, (str, int)):
            yield from _leaves(value, (*path, key.value))
        else:
            yield None, value  # a key not known here: no path leads to what is below it
