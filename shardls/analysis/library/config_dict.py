"""`ml_collections` configs: `ConfigDict` built in a `get_config()` and read elsewhere.

Google's configs build a `ConfigDict` and assign its fields one by one (`config.mesh_shape =
(1, -1)`, `config.model = ConfigDict()`, `config.model.num_heads = 8`), then return it. A config
is the scope that built it and the name it is bound to there: a field is the last value that
scope writes to `name.field` (the config as `get_config()` returns it), else the entry of the
dictionary it was built from. Each value is a default a run can override (`--config.x=...` of
`config_flags`), so it is marked as an assumption (`library/overridable.py`); a field the code
never sets, a `placeholder`, and a config changed by a method call (`config.update(...)`) stay
unknown.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.overridable import overridable
from shardls.analysis.library.registry import attributes, calls, methods
from shardls.analysis.values import BoundMethod, Const, DictV, Unknown, Value, as_str

_CONSTRUCTORS = ("ConfigDict", "FrozenConfigDict")


@dataclass(frozen=True, eq=False)
class ConfigV(Value):
    """A `ConfigDict`: the entries it was built from, and where it was built (its fields are
    written there, as `name.field = ...`)."""

    entries: tuple[tuple[str, Value], ...]
    built: Frame | None = None
    node: ast.Call | None = None
    label: str | None = None
    """How a config nested as a dict in another's entries is read (`config.opt`)."""


@calls(
    *(f"ml_collections.{name}" for name in _CONSTRUCTORS),
    *(f"ml_collections.config_dict.{name}" for name in _CONSTRUCTORS),
)
def _config(call: CallArgs) -> Value | None:
    initial = call.get(0, "initial_dictionary")
    if isinstance(initial, ConfigV):
        return initial  # a copy (or frozen copy) of a config reads as the config
    if initial is None or (isinstance(initial, Const) and initial.value is None):
        return ConfigV((), call.frame, call.node)
    if isinstance(initial, DictV):
        return ConfigV(_entries(initial), call.frame, call.node)
    return Unknown("a ConfigDict built from a value not known here")


def _entries(initial: DictV) -> tuple[tuple[str, Value], ...]:
    return tuple((str(k.value), v) for k, v in zip(initial.keys, initial.values) if isinstance(k, Const))


@calls("ml_collections.FieldReference", "ml_collections.config_dict.FieldReference")
def _reference(call: CallArgs) -> Value | None:
    """`FieldReference(4)` reads as its value; `FieldReference(None, field_type=int)` is a
    placeholder."""
    value = call.get(0, "default")
    if value is None or (isinstance(value, Const) and value.value is None):
        return Unknown("a config placeholder, set at run time")
    return value


@calls("ml_collections.config_dict.placeholder")
def _placeholder(call: CallArgs) -> Value | None:
    return Unknown("a config placeholder, set at run time")


@attributes(ConfigV)
def _config_attribute(
    library: Library, evaluator: object, base: Value, attr: str, frame: object
) -> Value | None:
    if not isinstance(base, ConfigV):
        return None
    assert isinstance(evaluator, Evaluator)
    return field(evaluator, base, attr)


@methods(ConfigV, "get", "get_ref", "copy_and_resolve_references", "get_oneway_ref")
def _config_method(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    config = method.base
    assert isinstance(config, ConfigV)
    if method.name == "copy_and_resolve_references":
        return config
    name = as_str(call.get(0, "key") or Const(None))
    if name is None:
        return None
    found = field(call.evaluator, config, name)
    if method.name == "get" and isinstance(found, Unknown) and found.reason.endswith(_NOT_SET):
        return call.get(1, "default") or Const(None)
    return found


_NOT_SET = "not set where the config is built"


def field(evaluator: Evaluator, config: ConfigV, attr: str) -> Value:
    """A field of the config as its builder leaves it, marked as an overridable default."""
    built = config.built
    name = _bound_name(config) or config.label
    dotted = f"{name}.{attr}" if name else attr
    if built is not None and config.node is not None and name is not None:
        scope = built.scope
        if any(b.kind == "mutate" for b in scope.bindings.get(name, ())):
            return Unknown(f"{name} is changed by a method call", symbol=dotted)
        if scope.kind == "module" and evaluator.reads is not None:
            evaluator.reads.names.add((built.module.path, dotted))
        candidates = scope.lookup(dotted, None)
        if candidates:
            top = Frame(built.module, scope, built.segment, None, built.locals, built.call_depth)
            value = evaluator.bindings_value(candidates, scope, top)
            return _default(value, dotted, built, candidates[-1].line)
    entry = next((value for key, value in config.entries if key == attr), None)
    if entry is None:
        return Unknown(f"config field {attr!r} is {_NOT_SET}", symbol=dotted)
    line = built.line_of(config.node) if built is not None and config.node is not None else None
    return _default(entry, dotted, built, line)


def _default(value: Value, dotted: str, built: Frame | None, line: int | None) -> Value:
    if isinstance(value, DictV):  # a dict in a ConfigDict's entries is a ConfigDict
        return ConfigV(_entries(value), built, None, dotted)
    path = built.module.path if built is not None else None
    return overridable(
        value,
        f"config value {dotted} (overridable)",
        f"the config value {dotted} (a run may override it)",
        path,
        line,
    )


def _bound_name(config: ConfigV) -> str | None:
    """The name (`config`, `config.model`) the builder assigns the config to."""
    if config.built is None or config.node is None:
        return None
    for name, bindings in config.built.scope.bindings.items():
        if any(b.value is config.node and b.kind == "assign" and not b.unpack for b in bindings):
            return name
    return None
