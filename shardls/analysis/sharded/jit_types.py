"""Calls of a function jitted with `in_shardings=`/`out_shardings=`, on typed arrays.

`jax.jit(f, in_shardings=..., out_shardings=...)(x)`, `step(x)` after `step = jax.jit(...)`, and
`f(x)` for `@partial(jax.jit, ...)`. The body is evaluated with the arguments' own types (the
interpreter does that already); here, where the call runs eagerly, each typed argument is checked
against its in_sharding (the core's `jit_argument`: JAX refuses a committed array sharded
differently, SH320) and each result takes its out_sharding's type, as a placement from the body's
type (so the hover says what the resharding moves). Traced (inside another jit) neither applies,
as in JAX; where shardls does not know whether the call is traced, a result with an out_sharding
has no type and no argument is judged.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from shardls.analysis.sharded.propagate import place, record_rejection, untyped_array
from shardls.analysis.values import (
    ArrayV,
    Const,
    FunctionV,
    Ref,
    Seq,
    ShardingV,
    TransformedV,
    Value,
    as_int,
    as_str,
)
from shardls.core.typing import TypeRejected
from shardls.core.typing.jit import jit_argument

if TYPE_CHECKING:
    from shardls.analysis.evaluator import Evaluator, Frame

_Change = Callable[[ArrayV], ArrayV]

_OPTIONS = ("in_shardings", "out_shardings")
_JIT = "jax.jit"
_PARTIAL = "functools.partial"
_JIT_PARAMETERS = ("fun", "in_shardings", "out_shardings")
"""`jax.jit`'s positional parameters (`pjit`, canonicalised to it, takes the shardings so)."""


@dataclass(frozen=True)
class JitOptions:
    """What a jit application says about its calls: its shardings, and which positional
    arguments are static (they take no sharding)."""

    in_shardings: Value | None
    out_shardings: Value | None
    static: frozenset[int] | None
    """Positions among the caller's arguments; None when they cannot be read (no argument is
    then judged)."""


def jit_options(arguments: Mapping[str, Value], function: Value | None) -> JitOptions | None:
    """The options of `jax.jit(f, **arguments)`, when it gives a sharding."""
    if all(arguments.get(name) is None for name in _OPTIONS):
        return None
    return JitOptions(
        arguments.get("in_shardings"), arguments.get("out_shardings"), _static(arguments, function)
    )


def wrapped_options(wrapped: TransformedV) -> JitOptions | None:
    """The options of a jitted function value (`step = jax.jit(f, ...)`)."""
    if wrapped.api != _JIT:
        return None
    return jit_options(dict(wrapped.arguments), wrapped.func)


def decorator_options(evaluator: Evaluator, func: FunctionV) -> JitOptions | None:
    """The options of `@partial(jax.jit, in_shardings=..., out_shardings=...)` on `func`,
    evaluated where the `def` is (as Python evaluates a decorator)."""
    from shardls.analysis.evaluator import Frame

    info = func.func
    for decorator in info.node.decorator_list:
        if not isinstance(decorator, ast.Call) or not any(k.arg in _OPTIONS for k in decorator.keywords):
            continue
        frame = Frame(info.module, info.parent, info.segment, info.parent.order_of.get(id(info.node)), {})
        wrapper = evaluator.evaluate(decorator.func, frame)
        if not isinstance(wrapper, Ref) or wrapper.qualname != _PARTIAL:
            return None
        args, kwargs = evaluator.call_arguments(decorator, frame)
        if not args or not isinstance(args[0], Ref) or args[0].qualname != _JIT:
            return None
        arguments = {**dict(zip(_JIT_PARAMETERS[1:], args[1:])), **kwargs}
        return jit_options(arguments, func)
    return None


def decorated_call(
    evaluator: Evaluator,
    func: FunctionV,
    node: ast.Call | None,
    frame: Frame,
    args: Sequence[Value],
    kwargs: Mapping[str, Value],
    result: Value,
) -> Value:
    """The value of a call of a workspace function: `result`, judged and typed as a jitted call
    when the function is decorated with jit shardings."""
    if node is None or not func.func.node.decorator_list:
        return result
    options = decorator_options(evaluator, func)
    return result if options is None else jitted_call(evaluator, frame, node, options, args, kwargs, result)


def jitted_call(
    evaluator: Evaluator,
    frame: Frame,
    node: ast.Call,
    options: JitOptions,
    args: Sequence[Value],
    kwargs: Mapping[str, Value],
    result: Value,
) -> Value:
    """The value of a call of a jitted function whose body gave `result`: its arguments judged
    against in_shardings, its result typed by out_shardings (see the module's docstring)."""
    tracing = evaluator.tracing
    if tracing is True:
        return result
    if tracing is False and options.in_shardings is not None and not kwargs and options.static is not None:
        _check_arguments(evaluator, frame, node, options.in_shardings, args, options.static)
    if options.out_shardings is None:
        return result
    if tracing is None:
        return _untyped_tree(result)
    return _placed_tree(evaluator, frame, node, options.out_shardings, result)


# -- in_shardings ------------------------------------------------------------------------------


def _check_arguments(
    evaluator: Evaluator,
    frame: Frame,
    node: ast.Call,
    shardings: Value,
    args: Sequence[Value],
    static: frozenset[int],
) -> None:
    """Each typed argument against its in_sharding: a tuple gives one per (non-static) positional
    argument, anything else applies to all of them (a pytree prefix, as in JAX)."""
    positions = [i for i in range(len(args)) if i not in static]
    if isinstance(shardings, Seq):
        if len(shardings.items) != len(positions):
            return  # JAX raises its own error about the count
        given = list(zip(positions, shardings.items))
    else:
        given = [(i, shardings) for i in positions]
    for position, sharding in given:
        argument_node = node.args[position] if position < len(node.args) else node
        if any(isinstance(a, ast.Starred) for a in node.args[: position + 1]):
            argument_node = node
        for leaf, array in _leaves(sharding, args[position]):
            _check_argument(evaluator, frame, argument_node, leaf, array)


def _check_argument(evaluator: Evaluator, frame: Frame, node: ast.AST, leaf: Value, array: ArrayV) -> None:
    arg = array.typed
    sharding = _sharding(evaluator, leaf)
    if arg is None or sharding is None or sharding.mesh is None or sharding.mesh.mesh != arg.type.mesh:
        return
    try:
        jit_argument(arg.type, sharding.spec.spec)
    except TypeRejected as rejected:
        record_rejection(evaluator, frame, node, "jit in_shardings", [arg], rejected)


# -- out_shardings -----------------------------------------------------------------------------


def _placed_tree(
    evaluator: Evaluator, frame: Frame, node: ast.Call, shardings: Value, result: Value
) -> Value:
    """`result` with every array below a sharding leaf placed by it (None leaves keep the
    body's type)."""
    if isinstance(shardings, Seq) and isinstance(result, Seq) and len(shardings.items) == len(result.items):
        items = [_placed_tree(evaluator, frame, node, s, r) for s, r in zip(shardings.items, result.items)]
        return replace(result, items=tuple(items))
    if isinstance(shardings, Seq) or _unspecified(shardings):
        return result if _unspecified(shardings) else _untyped_tree(result)
    sharding = _sharding(evaluator, shardings)
    return _map_arrays(result, lambda array: _placed(evaluator, frame, node, sharding, array))


def _placed(
    evaluator: Evaluator, frame: Frame, node: ast.Call, sharding: ShardingV | None, array: ArrayV
) -> ArrayV:
    if sharding is None:
        return untyped_array(array)
    placed = place(evaluator, frame, node, "jit out_shardings", sharding, array, array.typed)
    return untyped_array(array) if placed is array else placed


# -- pytrees -----------------------------------------------------------------------------------


def _leaves(sharding: Value, value: Value) -> Iterator[tuple[Value, ArrayV]]:
    """Pair a sharding pytree prefix with the arrays of a value: a leaf applies to every array
    below it; a tuple pairs item by item with a tuple of the same length (else nothing)."""
    if isinstance(sharding, Seq):
        if isinstance(value, Seq) and len(value.items) == len(sharding.items):
            for s, v in zip(sharding.items, value.items):
                yield from _leaves(s, v)
        return
    if _unspecified(sharding):
        return
    yield from ((sharding, array) for array in _arrays(value))


def _arrays(value: Value) -> Iterator[ArrayV]:
    if isinstance(value, ArrayV):
        yield value
    elif isinstance(value, Seq):
        for item in value.items:
            yield from _arrays(item)


def _map_arrays(value: Value, change: _Change) -> Value:
    if isinstance(value, ArrayV):
        return change(value)
    if isinstance(value, Seq):
        return replace(value, items=tuple(_map_arrays(item, change) for item in value.items))
    return value


def _untyped_tree(value: Value) -> Value:
    return _map_arrays(value, untyped_array)


def _unspecified(sharding: Value) -> bool:
    return isinstance(sharding, Const) and sharding.value is None


def _sharding(evaluator: Evaluator, value: Value) -> ShardingV | None:
    """A sharding leaf with its mesh (a bare spec takes the context mesh of the call); None when
    it is not known, or names an entry shardls cannot read."""
    from shardls.analysis.library.convert import sharding_of

    sharding = sharding_of(value)
    if sharding is None or sharding.spec.unknown_entries:
        return None
    if sharding.mesh is None:
        mesh = evaluator.context_mesh
        return replace(sharding, mesh=mesh) if mesh is not None else None
    return sharding


def _static(arguments: Mapping[str, Value], function: Value | None) -> frozenset[int] | None:
    """`static_argnums` and `static_argnames` as positions among the caller's arguments."""
    positions: set[int] = set()
    offset = 1 if isinstance(function, FunctionV) and function.bound is not None else 0
    for value in _items(arguments.get("static_argnums")):
        number = as_int(value)
        if number is None:
            return None
        if number >= offset:
            positions.add(number - offset)
    names = _parameters(function)
    for value in _items(arguments.get("static_argnames")):
        name = as_str(value)
        if name is None or names is None:
            return None
        if name in names:
            positions.add(names.index(name) - offset)
    return frozenset(positions)


def _parameters(function: Value | None) -> list[str] | None:
    if not isinstance(function, FunctionV):
        return None
    args = function.func.node.args
    return [a.arg for a in [*args.posonlyargs, *args.args]]


def _items(value: Value | None) -> tuple[Value, ...]:
    if value is None or (isinstance(value, Const) and value.value is None):
        return ()
    return value.items if isinstance(value, Seq) else (value,)
