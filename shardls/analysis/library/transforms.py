"""`jax.jit` and `jax.shard_map` as values: a wrapped function that remembers how it was wrapped,
so that its calls (`step(x)`, `step.lower(x)`) can be traced back to the shardings.

Calling a jitted function gives what the function returns (jit keeps shapes); so does
`.eval_shape(...)`. A shard_mapped function's result depends on the mesh, which may come from
the caller's `jax.set_mesh` context: it is typed where that mesh and the arguments' types are
known (`sharded/manual.py`), and the shard_map recognizer lays its outputs out.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.differentiation import PASS_THROUGH, call_transformed, traced_call
from shardls.analysis.library.registry import attributes, calls, methods
from shardls.analysis.sharded.jit_types import jitted_call, wrapped_options
from shardls.analysis.sharded.manual import SHARD_MAP_APIS, shard_mapped_call
from shardls.analysis.sharded.vmapped import VMAP, vmapped_call
from shardls.analysis.values import BoundMethod, Seq, TransformedV, Value

WRAPPER_PARAMETERS: dict[str, tuple[str, ...]] = {
    # `pjit` is canonicalised to `jax.jit`; only it takes the shardings positionally.
    "jax.jit": ("fun", "in_shardings", "out_shardings"),
    "jax.shard_map": ("f",),
    "jax.experimental.shard_map.shard_map": ("f", "mesh", "in_specs", "out_specs", "check_rep"),
    "jax.vmap": ("fun", "in_axes", "out_axes"),
    # Flax's lifted versions take their options by keyword only.
    "flax.nnx.jit": ("fun",),
    "flax.nnx.jit_partial": ("fun",),
    "flax.nnx.shard_map": ("f",),
}
"""The positional parameters of each wrapper (the others are keyword-only)."""

JIT_PARTIAL = "flax.nnx.jit_partial"
PARTIAL_ARGS = "partial_args"
"""Where `wrapper_arguments` keeps the arguments `nnx.jit_partial(f, *partial_args)` binds."""
NNX_JITS = ("flax.nnx.jit", JIT_PARTIAL)

WRAPPED_METHODS = ("eval_shape", "lower", "trace")
"""Methods of a jitted function that take the function's arguments."""


def wrapper_arguments(api: str, args: list[Value], kwargs: dict[str, Value]) -> dict[str, Value]:
    """A wrapper call's arguments by JAX's parameter names (`nnx.jit_partial(f, *partial_args)`:
    the arguments bound ahead as `partial_args`)."""
    parameters = WRAPPER_PARAMETERS[api]
    found = dict(zip(parameters, args))
    if api == JIT_PARTIAL:
        found[PARTIAL_ARGS] = Seq(tuple(args[len(parameters) :]))
    found.update(kwargs)
    return found


def partial_args(wrapped: TransformedV) -> tuple[Value, ...]:
    """The arguments `nnx.jit_partial` binds ahead of the caller's (none for other wrappers)."""
    bound = dict(wrapped.arguments).get(PARTIAL_ARGS)
    return bound.items if isinstance(bound, Seq) else ()


@calls("jax.eval_shape", "flax.nnx.eval_shape")
def _eval_shape(call: CallArgs) -> Value | None:
    """`jax.eval_shape(f, *args)`: the shapes of what `f(*args)` returns (`model.init` gives the
    parameter tree the Linen guides read their partition specs from)."""
    if not call.args or any(isinstance(a, ast.Starred) for a in call.node.args):
        return None
    return call.evaluator.call(call.args[0], call.args[1:], call.kwargs, None, call.frame)


@calls(*WRAPPER_PARAMETERS)
def _wrap(call: CallArgs) -> Value | None:
    function_parameter = WRAPPER_PARAMETERS[call.qualname][0]
    arguments = wrapper_arguments(call.qualname, call.args, call.kwargs)
    func = arguments.get(function_parameter)
    if func is None:
        return None  # the decorator-factory form, e.g. `jax.shard_map(mesh=..., ...)`
    return BoundMethod(TransformedV(call.qualname, func, call.node, tuple(arguments.items())), "__call__")


@methods(TransformedV, "__call__", *WRAPPED_METHODS)
def _call_wrapped(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    wrapped = method.base
    assert isinstance(wrapped, TransformedV)
    if wrapped.api in SHARD_MAP_APIS and method.name == "__call__":
        return shard_mapped_call(call, wrapped)
    if wrapped.api == VMAP and method.name == "__call__":
        return vmapped_call(call, wrapped)
    if wrapped.api in PASS_THROUGH and method.name == "__call__":
        return call_transformed(call, wrapped)
    if wrapped.api in NNX_JITS and method.name in ("__call__", "eval_shape"):
        return traced_call(replace(call, args=[*partial_args(wrapped), *call.args]), wrapped)
    if wrapped.api != "jax.jit" or method.name not in ("__call__", "eval_shape"):
        return None
    result = traced_call(call, wrapped)
    options = wrapped_options(wrapped) if method.name == "__call__" else None
    if options is None:
        return result
    return jitted_call(call.evaluator, call.frame, call.node, options, call.args, call.kwargs, result)


@attributes(BoundMethod)
def _wrapped_method(
    library: Library, evaluator: object, base: Value, attr: str, frame: object
) -> Value | None:
    """`step.lower` where `step` is the `__call__` of a wrapped function."""
    if isinstance(base, BoundMethod) and isinstance(base.base, TransformedV) and attr in WRAPPED_METHODS:
        return BoundMethod(base.base, attr)
    return None
