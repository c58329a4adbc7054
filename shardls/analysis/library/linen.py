"""Flax Linen: partitioned initializers and `self.param` of an `nn.Module`.

Linen does not lay parameters out when it creates them the way NNX does: `nn.with_partitioning`
and `nn.with_logical_partitioning` only box the initializer's value with axis names (a
`Partitioned`/`LogicallyPartitioned`, `flax/core/meta.py`, `flax/linen/spmd.py`), which
`nn.get_partition_spec`/`nn.get_sharding` read back and `jax.jit(init, out_shardings=...)`
applies. This module answers "what is this expression?" for those objects; the parameters
become sites in `recognizers/linen.py`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.facts import Span
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.convert import dtype_of, shape_of
from shardls.analysis.library.nnx import with_spans
from shardls.analysis.library.registry import attributes, calls
from shardls.analysis.values import ArrayV, InstanceV, Ref, Value
from shardls.core import FLOAT32

LINEN_MODULE = "flax.linen.Module"
PARAM = "flax.linen.Module.param"
"""`self.param(name, init, *shape)` of a Linen module, by the name recognizers know it by."""


@dataclass(frozen=True)
class PartitionedInitV(Value):
    """`nn.with_partitioning(init, names, mesh)` or `nn.with_logical_partitioning(init, names,
    mesh, rules)`: an initializer whose value Linen boxes with these axis names."""

    names: Value
    mesh: Value | None
    rules: Value | None
    logical: bool
    span: Span | None = field(default=None, compare=False)


def _partitioned(call: CallArgs, logical: bool) -> Value | None:
    names = call.get(1, "names")
    if names is None:
        return None
    return PartitionedInitV(
        with_spans(names, call.arg_node(1, "names"), call.frame),
        call.get(2, "mesh"),
        call.get(3, "rules") if logical else None,
        logical,
        call.frame.span(call.node),
        origin=call.frame.origin("with_partitioning", call.node),
    )


@calls(
    "flax.linen.with_partitioning", "flax.core.meta.with_partitioning", "flax.linen.spmd.with_partitioning"
)
def _with_partitioning(call: CallArgs) -> Value | None:
    return _partitioned(call, logical=False)


@calls("flax.linen.with_logical_partitioning", "flax.linen.spmd.with_logical_partitioning")
def _with_logical_partitioning(call: CallArgs) -> Value | None:
    return _partitioned(call, logical=True)


def applying(statement: ast.stmt, built: ast.Call | None) -> ast.Call | None:
    """`Cls(...)(x)`: the call in `statement` that applies what `built` makes (a layer, a module,
    a lifted module class); None when it is applied elsewhere."""
    if built is None:
        return None
    return next((n for n in ast.walk(statement) if isinstance(n, ast.Call) and n.func is built), None)


def is_linen_module(evaluator: Evaluator, value: Value, frame: Frame) -> bool:
    """An instance of a workspace class derived from `nn.Module`."""
    return isinstance(value, InstanceV) and LINEN_MODULE in evaluator.base_qualnames(value.cls, frame)


@attributes(InstanceV)
def _module_param(
    library: Library, evaluator: Evaluator, base: Value, attr: str, frame: Frame
) -> Value | None:
    """`self.param` of a Linen module is the library's `Module.param` (a workspace class's own
    attributes are looked up before this is asked)."""
    if attr == "param" and is_linen_module(evaluator, base, frame):
        return Ref(PARAM)
    return None


def param_array(call: CallArgs) -> ArrayV:
    """The array `self.param(name, init, shape, dtype)` holds: Linen passes the arguments after
    `init` to it, and Flax's initializers take `(key, shape, dtype)`, float32 by default."""
    shape = shape_of(call.get(2, "shape"))
    dtype = dtype_of(call.get(3, "dtype"), call.library.environment.x64) or FLOAT32
    return ArrayV(shape, dtype)


@calls(PARAM)
def _param(call: CallArgs) -> Value | None:
    return param_array(call)
