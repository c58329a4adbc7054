"""What the interpreter knows about JAX, Flax, numpy and the standard library.

Each module here registers handlers by canonical dotted name (`jax.sharding.PartitionSpec`);
`canonical()` maps the many spellings real code uses (`jax.P`, the legacy
`jax.experimental` paths, `flax.experimental.nnx`) onto those names.
"""

from __future__ import annotations

import ast
import functools
import math
from dataclasses import dataclass

from shardls.analysis.definitions import ClassInfo
from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.library.shape_use import unpacked_parameter
from shardls.analysis.scopes import Scope
from shardls.analysis.sharded.operations import (
    has_call_rule,
    has_method,
    typed_attribute,
    typed_call,
    typed_method,
)
from shardls.analysis.values import (
    ArrayV,
    BoundMethod,
    Choice,
    Const,
    Unknown,
    Value,
    guarded_alternatives,
    options,
)
from shardls.core import DType

_COMBINATIONS = 8
"""The most combinations of its arguments' options a library call is evaluated for."""

_SHAPE_MODULES = frozenset(
    f"shardls.analysis.library.{name}"
    for name in (
        "array_functions",
        "array_moves",
        "array_shaping",
        "array_slicing",
        "collectives",
        "operations",
        "regex",
    )
)
"""Modules whose handlers compute an array's shape from their operands' and know nothing of
choices: a call with an argument of several possible values is made for each (`_call_each`).
A regular expression matched against each of several rules or names is one of these too.
Others (meshes, shardings, Flax) read their choices themselves."""


@dataclass
class CallArgs:
    """A library call's arguments, with JAX's parameter names for keyword-or-positional lookup."""

    evaluator: Evaluator
    library: Library
    qualname: str
    args: list[Value]
    kwargs: dict[str, Value]
    node: ast.Call
    frame: Frame

    def get(self, index: int | None, *names: str) -> Value | None:
        for name in names:
            if name in self.kwargs:
                return self.kwargs[name]
        if index is not None and index < len(self.args):
            return self.args[index]
        return None

    def arg_node(self, index: int | None, *names: str) -> ast.expr | None:
        """The source expression of an argument (for positions in diagnostics)."""
        for keyword in self.node.keywords:
            if keyword.arg in names:
                return keyword.value
        positional = [a for a in self.node.args]
        if (
            index is not None
            and index < len(positional)
            and not any(isinstance(a, ast.Starred) for a in positional[: index + 1])
        ):
            return positional[index]
        return None


@dataclass(frozen=True)
class Environment:
    """Facts the library needs that are not in the source: the device count and default dtype."""

    device_count: Const
    default_dtype: DType
    x64: bool = False
    """`jax_enable_x64`: 64-bit dtypes stay 64-bit instead of being narrowed."""
    stated_in_branch: bool = False
    """The device count is the one an `if` branch on it states (`device_branches`), not the
    file's: a mesh built there meets that many devices."""
    runs_elsewhere: bool = False
    """The code evaluated runs only where the device count is not the assumed default (an `if`
    branch the default contradicts): what rests on the count is not reported for it."""


_PREFIX_ALIASES: tuple[tuple[str, str], ...] = (
    ("flax.experimental.nnx.", "flax.nnx."),
    ("jax.experimental.maps.", "jax.sharding."),
    ("jax.interpreters.pxla.", "jax.sharding."),
    ("jax.experimental.pjit.", "jax.sharding."),
    ("jax._src.partition_spec.", "jax.sharding."),
    ("jax._src.mesh.", "jax.sharding."),
    ("ml_collections.config_dict.config_dict.", "ml_collections.config_dict."),
    ("np.", "numpy."),
    ("jnp.", "jax.numpy."),
)

_EXACT_ALIASES: dict[str, str] = {
    "jax.P": "jax.sharding.PartitionSpec",
    "jax.experimental.PartitionSpec": "jax.sharding.PartitionSpec",
    "jax.NamedSharding": "jax.sharding.NamedSharding",
    "jax.sharding.set_mesh": "jax.set_mesh",
    "jax.sharding.use_mesh": "jax.set_mesh",
    "jax.reshard": "jax.sharding.reshard",
    "jax.sharding.with_sharding_constraint": "jax.lax.with_sharding_constraint",
    "jax.sharding.with_sharding_constraint_": "jax.lax.with_sharding_constraint",
    "jax.experimental.shard_map.shard_map": "jax.experimental.shard_map.shard_map",
    "jax.sharding.shard_map": "jax.shard_map",
    "jax.sharding.pjit": "jax.jit",
    "jax.sharding.use_abstract_mesh": "jax.sharding.use_abstract_mesh",
    "jax.use_abstract_mesh": "jax.sharding.use_abstract_mesh",
    "jax.AbstractMesh": "jax.sharding.AbstractMesh",
    "jax.AxisType": "jax.sharding.AxisType",
    "flax.linen.logical_axis_rules": "flax.nnx.logical_axis_rules",
    "flax.core.spmd.logical_axis_rules": "flax.nnx.logical_axis_rules",
    "flax.linen.partitioning.axis_rules": "flax.nnx.logical_axis_rules",
    "flax.linen.spmd.logical_axis_rules": "flax.nnx.logical_axis_rules",
    "flax.nnx.spmd.with_partitioning": "flax.nnx.with_partitioning",
    "flax.nnx.Variable": "flax.nnx.Param",
}


@functools.lru_cache(maxsize=4096)
def _canonical(qualname: str) -> str:
    """One name per library object, whichever of its spellings the code used (cached: every
    attribute of a library object asks)."""
    for prefix, target in _PREFIX_ALIASES:
        if qualname.startswith(prefix):
            qualname = target + qualname[len(prefix) :]
    return _EXACT_ALIASES.get(qualname, qualname)


class Library:
    """Dispatches library calls, attributes and methods to the registered handlers."""

    def __init__(self, environment: Environment) -> None:
        from shardls.analysis.library import registry

        self.environment = environment
        self.calls, self.methods, self.subscripts, self.instantiators = registry.tables()
        self.attribute_handlers = registry.attribute_handlers

    def canonical(self, qualname: str) -> str:
        return _canonical(qualname)

    def call(
        self,
        evaluator: Evaluator,
        qualname: str,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.Call,
        frame: Frame,
    ) -> Value | None:
        handler = self.calls.get(qualname)
        if handler is None and not has_call_rule(qualname):
            return None  # most calls the interpreter meets are of functions it does not model
        if (
            handler is not None
            and handler.__module__ in _SHAPE_MODULES
            and any(isinstance(a, Choice) for a in (*args, *kwargs.values()))
        ):
            each = self._call_each(evaluator, qualname, args, kwargs, node, frame)
            if each is not None:
                return each
        call = CallArgs(evaluator, self, qualname, args, kwargs, node, frame)
        return typed_call(call, handler(call) if handler is not None else None)

    def models_call(self, qualname: str) -> bool:
        return qualname in self.calls or has_call_rule(qualname)

    def models_method(self, method: BoundMethod) -> bool:
        return (type(method.base).__name__, method.name) in self.methods or (
            isinstance(method.base, ArrayV) and has_method(method.name)
        )

    def _call_each(
        self,
        evaluator: Evaluator,
        qualname: str,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.Call,
        frame: Frame,
    ) -> Value | None:
        """A call with an argument that has several possible values (`chunk` after `if
        chunk.ndim == 1: chunk = chunk[None, :]`): the call of each combination (at most
        `_COMBINATIONS`; never two options of opposite branches of one `if`), their results as one
        choice keeping the branches each comes through, evaluated as branches are. None
        when there are more combinations than that (a choice of some would leave others out)."""
        values = [*args, *kwargs.values()]
        if math.prod(sum(1 for _ in options(v)) for v in values) > _COMBINATIONS:
            return None
        names = list(kwargs)
        results: list[Value] = []
        guards = []
        with evaluator.branches():
            for combination, guard in guarded_alternatives(values, _COMBINATIONS):
                positional, named = list(combination[: len(args)]), dict(zip(names, combination[len(args) :]))
                result = self.call(evaluator, qualname, positional, named, node, frame)
                results.append(result if result is not None else Unknown(f"result of {qualname}()"))
                guards.append(guard)
        return evaluator.choice(results, guards)

    def attribute(
        self, evaluator: Evaluator, base: Value, attr: str, node: ast.AST, frame: Frame
    ) -> Value | None:
        if (type(base).__name__, attr) in self.methods or (isinstance(base, ArrayV) and has_method(attr)):
            return BoundMethod(base, attr)
        for handler in self.attribute_handlers(type(base)):
            found = handler(self, evaluator, base, attr, frame)
            if found is not None:
                return typed_attribute(evaluator, base, attr, node, frame, found)
        return None

    def method(
        self,
        evaluator: Evaluator,
        method: BoundMethod,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.Call,
        frame: Frame,
    ) -> Value | None:
        handler = self.methods.get((type(method.base).__name__, method.name))
        typed = isinstance(method.base, ArrayV) and has_method(method.name)
        if handler is None and not typed:
            return None
        call = CallArgs(evaluator, self, method.name, args, kwargs, node, frame)
        result = handler(self, method, call) if handler is not None else None
        return typed_method(call, method.base, result) if typed else result

    def parameter(self, scope: Scope, name: str) -> Value | None:
        """A parameter no call binds, when its function's body says what it is (see `shape_use`)."""
        return unpacked_parameter(scope, name)

    def subscript(
        self, evaluator: Evaluator, base: Value, index: Value | slice, frame: Frame
    ) -> Value | None:
        for handler in self.subscripts:
            found = handler(base, index)
            if found is not None:
                return found
        return None

    def instantiate(
        self,
        evaluator: Evaluator,
        cls: ClassInfo,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.Call | None,
        frame: Frame,
    ) -> Value | None:
        for handler in self.instantiators:
            found = handler(evaluator, cls, args, kwargs, node, frame)
            if found is not None:
                return found
        return None
