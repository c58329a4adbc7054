"""Facts to JSON and back, directed by their type hints: the persistent cache's data-only format.

A cache directory lives in the workspace, which is hostile by assumption (docs/security.md), so
reading an entry must never run code: no pickle, no class named by the data. Each value is
decoded as the type its field declares (`Span`, `tuple[Dim, ...]`, `Severity`), checked as it
goes, and built through the class's own constructor; anything else is a `CodecError`, which
callers treat as a miss. A `Layout` is stored as what it is computed from and computed again by
the core on reading, so its derived numbers always agree with its inputs.

Encoding follows the same hints, so a value decodes to an equal one: tuples stay tuples, enums
enums, a union member is tagged by its position when more than one could match. Fields equal to
their default are left out, which keeps entries small.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from shardls.core import Layout, compute_layout

Json = Any
"""What `json` reads and writes: None, bool, int, float, str, list and dict of those."""


class CodecError(ValueError):
    """A value that does not have the type it should (or that this format cannot hold)."""


Encoder = Callable[[Any], Json]
Decoder = Callable[[Json], Any]


_FAILURES = (TypeError, ValueError, KeyError, IndexError, AttributeError, NameError, RecursionError)
"""What a value the format cannot hold, data that is not such a value, or a type hint that does
not resolve raises on the way; each becomes a CodecError, so a cache never stops a check."""


def encode(hint: object, value: object) -> Json:
    """`value` as JSON, read as type `hint`; raises CodecError for what the format cannot hold."""
    try:
        return _codec(hint)[0](value)
    except CodecError:
        raise
    except _FAILURES as error:
        raise CodecError(f"{type(error).__name__}: {error}") from None


def decode(hint: object, data: Json) -> Any:
    """The value of type `hint` that `data` encodes; raises CodecError when it does not."""
    try:
        return _codec(hint)[1](data)
    except CodecError:
        raise
    except _FAILURES as error:
        raise CodecError(f"{type(error).__name__}: {error}") from None


@functools.cache
def _codec(hint: object) -> tuple[Encoder, Decoder]:
    origin = typing.get_origin(hint)
    if hint is object or hint is Any:
        return _plain, _plain_value
    if hint is type(None):
        return _none, _none
    if hint in (bool, int, float, str):
        return _scalar(hint)
    if hint is Layout:
        return _layout_codec()
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return _enum(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _dataclass(hint)
    if origin in (typing.Union, types.UnionType):
        return _union(typing.get_args(hint))
    if origin is tuple:
        return _tuple(typing.get_args(hint))
    if origin is frozenset:
        return _frozenset(typing.get_args(hint)[0])
    if origin in (dict, Mapping):
        return _mapping(*typing.get_args(hint))
    raise CodecError(f"no JSON form for {hint!r}")


def _none(value: object) -> None:
    if value is not None:
        raise CodecError(f"expected None, got {type(value).__name__}")
    return None


def _scalar(kind: type) -> tuple[Encoder, Decoder]:
    def check(value: object) -> object:
        # bool is an int in Python but not here; an int is a fine float in JSON.
        if type(value) is kind or (kind is float and type(value) is int):
            return value
        raise CodecError(f"expected {kind.__name__}, got {type(value).__name__}")

    return check, check


def _plain(value: object) -> Json:
    """A value typed `object` (a diagnostic's data): JSON's own kinds, with tuples and
    dictionaries marked so that they come back as they were."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, tuple):
        return {"tuple": [_plain(item) for item in value]}
    if isinstance(value, dict) and all(type(key) is str for key in value):
        return {"dict": {key: _plain(item) for key, item in value.items()}}
    raise CodecError(f"no JSON form for a {type(value).__name__} in data")


def _plain_value(data: Json) -> object:
    if data is None or type(data) in (bool, int, float, str):
        return data
    if isinstance(data, list):
        return [_plain_value(item) for item in data]
    if isinstance(data, dict) and len(data) == 1:
        if isinstance(data.get("tuple"), list):
            return tuple(_plain_value(item) for item in data["tuple"])
        if isinstance(data.get("dict"), dict):
            return {key: _plain_value(item) for key, item in data["dict"].items()}
    raise CodecError("malformed data value")


def _enum(kind: type[enum.Enum]) -> tuple[Encoder, Decoder]:
    def encode_member(value: object) -> Json:
        if not isinstance(value, kind):
            raise CodecError(f"expected {kind.__name__}, got {type(value).__name__}")
        return value.value

    def decode_member(data: Json) -> enum.Enum:
        if type(data) not in (str, int):
            raise CodecError(f"expected a {kind.__name__} value")
        return kind(data)

    return encode_member, decode_member


def _dataclass(kind: type) -> tuple[Encoder, Decoder]:
    hints = typing.get_type_hints(kind)
    fields = [f for f in dataclasses.fields(kind) if f.init]
    names = frozenset(f.name for f in fields)
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}

    def encode_instance(value: object) -> Json:
        if type(value) is not kind:
            raise CodecError(f"expected {kind.__name__}, got {type(value).__name__}")
        out: dict[str, Json] = {}
        for f in fields:
            item = getattr(value, f.name)
            if f.name in defaults and type(item) is type(defaults[f.name]) and item == defaults[f.name]:
                continue
            out[f.name] = encode(hints[f.name], item)
        return out

    def decode_instance(data: Json) -> object:
        if not isinstance(data, dict) or not names.issuperset(data):
            raise CodecError(f"expected the fields of {kind.__name__}")
        return kind(**{name: decode(hints[name], item) for name, item in data.items()})

    return encode_instance, decode_instance


def _union(members: tuple[object, ...]) -> tuple[Encoder, Decoder]:
    present = [m for m in members if m is not type(None)]
    optional = len(present) < len(members)
    if len(present) == 1:
        inner_encode, inner_decode = _codec(present[0])
        return (
            lambda value: None if value is None and optional else inner_encode(value),
            lambda data: None if data is None and optional else inner_decode(data),
        )

    def encode_member(value: object) -> Json:
        if value is None and optional:
            return None
        for index, member in enumerate(present):
            if _is_instance(value, member):
                return [index, encode(member, value)]
        raise CodecError(f"{type(value).__name__} is none of {members!r}")

    def decode_member(data: Json) -> object:
        if data is None and optional:
            return None
        if not (isinstance(data, list) and len(data) == 2 and type(data[0]) is int):
            raise CodecError("expected a tagged union member")
        if not 0 <= data[0] < len(present):
            raise CodecError("union member out of range")
        return decode(present[data[0]], data[1])

    return encode_member, decode_member


def _is_instance(value: object, hint: object) -> bool:
    """Whether `value` is of the (outer) type `hint`: enough to choose a union's member."""
    kind = typing.get_origin(hint) or hint
    if kind is int:
        return type(value) is int
    return isinstance(kind, type) and isinstance(value, kind)


def _tuple(arguments: tuple[object, ...]) -> tuple[Encoder, Decoder]:
    if len(arguments) == 2 and arguments[1] is Ellipsis:
        item = arguments[0]

        def encode_items(value: object) -> Json:
            if not isinstance(value, tuple):
                raise CodecError(f"expected a tuple, got {type(value).__name__}")
            return [encode(item, element) for element in value]

        def decode_items(data: Json) -> tuple[object, ...]:
            if not isinstance(data, list):
                raise CodecError("expected a list")
            return tuple(decode(item, element) for element in data)

        return encode_items, decode_items

    def encode_fixed(value: object) -> Json:
        if not isinstance(value, tuple) or len(value) != len(arguments):
            raise CodecError(f"expected a tuple of {len(arguments)}")
        return [encode(hint, element) for hint, element in zip(arguments, value, strict=True)]

    def decode_fixed(data: Json) -> tuple[object, ...]:
        if not isinstance(data, list) or len(data) != len(arguments):
            raise CodecError(f"expected a list of {len(arguments)}")
        return tuple(decode(hint, element) for hint, element in zip(arguments, data, strict=True))

    return encode_fixed, decode_fixed


def _frozenset(item: object) -> tuple[Encoder, Decoder]:
    def encode_set(value: object) -> Json:
        if not isinstance(value, frozenset):
            raise CodecError(f"expected a frozenset, got {type(value).__name__}")
        return sorted((encode(item, element) for element in value), key=repr)

    def decode_set(data: Json) -> frozenset[object]:
        if not isinstance(data, list):
            raise CodecError("expected a list")
        return frozenset(decode(item, element) for element in data)

    return encode_set, decode_set


def _mapping(key: object, item: object) -> tuple[Encoder, Decoder]:
    if key is not str:
        raise CodecError(f"no JSON form for mappings keyed by {key!r}")

    def encode_mapping(value: object) -> Json:
        if not isinstance(value, Mapping) or not all(type(k) is str for k in value):
            raise CodecError("expected a mapping with string keys")
        return {k: encode(item, v) for k, v in value.items()}

    def decode_mapping(data: Json) -> dict[str, object]:
        if not isinstance(data, dict):
            raise CodecError("expected an object")
        return {k: decode(item, v) for k, v in data.items()}

    return encode_mapping, decode_mapping


_LAYOUT_INPUTS = ("mesh", "spec", "global_shape", "dtype", "context")


def _layout_codec() -> tuple[Encoder, Decoder]:
    """A layout by its inputs: the core computes the rest again, so it cannot contradict them."""
    hints = typing.get_type_hints(Layout)
    fields = [(name, hints[name]) for name in _LAYOUT_INPUTS]

    def encode_layout(value: object) -> Json:
        if not isinstance(value, Layout):
            raise CodecError(f"expected a Layout, got {type(value).__name__}")
        return {name: encode(hint, getattr(value, name)) for name, hint in fields}

    def decode_layout(data: Json) -> Layout:
        if not isinstance(data, dict) or set(data) != set(_LAYOUT_INPUTS):
            raise CodecError("expected the inputs of a Layout")
        return compute_layout(*(decode(hint, data[name]) for name, hint in fields))

    return encode_layout, decode_layout
