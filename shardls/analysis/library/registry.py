"""Handler tables, filled by the library modules when they are imported."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from shardls.analysis.values import BoundMethod, Value

if TYPE_CHECKING:
    from shardls.analysis.definitions import ClassInfo
    from shardls.analysis.evaluator import Evaluator, Frame
    from shardls.analysis.library import CallArgs, Library

CallHandler = Callable[["CallArgs"], Value | None]
MethodHandler = Callable[["Library", BoundMethod, "CallArgs"], Value | None]
AttributeHandler = Callable[["Library", "Evaluator", Value, str, "Frame"], Value | None]
SubscriptHandler = Callable[[Value, Value | slice], Value | None]
Instantiator = Callable[
    ["Evaluator", "ClassInfo", list[Value], dict[str, Value], ast.Call | None, "Frame"], Value | None
]

_CALLS: dict[str, CallHandler] = {}
_METHODS: dict[tuple[str, str], MethodHandler] = {}
_ATTRIBUTES: list[tuple[AttributeHandler, tuple[type[Value], ...]]] = []
_SUBSCRIPTS: list[SubscriptHandler] = []
_INSTANTIATORS: list[Instantiator] = []


def calls(*qualnames: str) -> Callable[[CallHandler], CallHandler]:
    def register(handler: CallHandler) -> CallHandler:
        for name in qualnames:
            _CALLS[name] = handler
        return handler

    return register


def methods(value_type: type[Value], *names: str) -> Callable[[MethodHandler], MethodHandler]:
    def register(handler: MethodHandler) -> MethodHandler:
        for name in names:
            _METHODS[(value_type.__name__, name)] = handler
        return handler

    return register


def attributes(*bases: type[Value]) -> Callable[[AttributeHandler], AttributeHandler]:
    """Register a handler of attributes of values of these types (and their subclasses): it is
    asked only about those. Most attributes the evaluator reads are of unknown values or of
    library names (`jnp.zeros`), which no handler but a few answers for; asking all of them
    about every attribute cost 14 calls per read (236,000 reads in a check of maxtext)."""

    def register(handler: AttributeHandler) -> AttributeHandler:
        _ATTRIBUTES.append((handler, bases))
        return handler

    return register


def attribute_handlers(value_type: type[Value]) -> tuple[AttributeHandler, ...]:
    """The handlers asked about an attribute of a value of this type, in registration order."""
    found = _BY_TYPE.get(value_type)
    if found is None:
        found = _BY_TYPE[value_type] = tuple(
            handler for handler, bases in _ATTRIBUTES if issubclass(value_type, bases)
        )
    return found


_BY_TYPE: dict[type[Value], tuple[AttributeHandler, ...]] = {}


def subscripts(handler: SubscriptHandler) -> SubscriptHandler:
    _SUBSCRIPTS.append(handler)
    return handler


def instantiator(handler: Instantiator) -> Instantiator:
    _INSTANTIATORS.append(handler)
    return handler


def tables() -> tuple[
    dict[str, CallHandler],
    dict[tuple[str, str], MethodHandler],
    list[SubscriptHandler],
    list[Instantiator],
]:
    from shardls.analysis.library import (  # noqa: F401  (registration)
        argparse_,
        array_functions,
        array_moves,
        array_shaping,
        array_slicing,
        arrays,
        builtins_,
        collectives,
        command_flags,
        conditionals,
        config_dict,
        differentiation,
        dtype_info,
        linen,
        linen_apply,
        linen_init,
        linen_layers,
        linen_lifted,
        linen_specs,
        meshes,
        nnx,
        nnx_prefix,
        nnx_state,
        nnx_variables,
        numpy_random,
        omegaconf_,
        operations,
        paths,
        pytrees,
        regex,
        sharding,
        train_state,
        transforms,
        type_names,
        yaml_files,
    )

    for handlers in (_SUBSCRIPTS, _INSTANTIATORS):
        handlers.sort(key=_written_order)
    _ATTRIBUTES.sort(key=lambda registered: _written_order(registered[0]))
    _BY_TYPE.clear()  # by the order just settled
    return _CALLS, _METHODS, _SUBSCRIPTS, _INSTANTIATORS


def _written_order(handler: Callable[..., object]) -> tuple[str, int]:
    """Attribute, subscript and instantiator handlers are tried in turn, the first answer wins:
    in the order of their modules and lines, never in the order modules happened to be imported
    (the memory report imports `library.nnx` before the rest, which once changed results)."""
    code = getattr(handler, "__code__", None)
    return handler.__module__, code.co_firstlineno if code is not None else 0
