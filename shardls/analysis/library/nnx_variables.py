"""Flax NNX variables as values: `nnx.Param(value, ...)` holds its array and its metadata.

A variable is what `nnx.state(model)` has at its leaves and what a module's attribute holds, so
code reads its array back with `x.value`, `x[...]`, `x.get_value()` or Flax's idiom
`getattr(x, "value", x)` (a variable or already its array). The shape and annotation come from
the same reading of the call as the parameter's site (`recognizers/nnx/params.variable_param`).

A variable or layer created inside a function `nnx.vmap`/`nnx.scan` transforms gains a leading
axis that a value cannot see from where it is made: it is not modelled (`stacked_creation`).
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.arrays import array_attributes
from shardls.analysis.library.registry import attributes, calls, methods, subscripts
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.scopes import Scope
from shardls.analysis.values import ArrayV, BoundMethod, Const, Ref, Value

if TYPE_CHECKING:
    from shardls.analysis.recognizers.nnx.annotations import Annotation

VARIABLE_KINDS = ("Param", "BatchStat", "Cache", "Intermediate")
"""The variable types whose construction is modelled, by their name in `flax.nnx`."""
_STACKING = ("vmap", "scan")
_FORWARDED = frozenset({"shape", "dtype", "ndim", "size", "T"})
"""Attributes a variable answers from its array."""


@dataclass(frozen=True)
class VariableV(Value):
    """An `nnx.Variable` of type `kind` (`Param`, `BatchStat`, ...) holding `value`."""

    kind: str
    value: Value
    annotation: Annotation | None = None
    """The sharding metadata it was created with (`out_sharding=`, `*_init=with_partitioning`),
    as the parameter's site reads it; None when it has none."""

    @property
    def sharding_names(self) -> Value:
        """`x.sharding_names` / `x.out_sharding`: the annotation as written, or None."""
        return self.annotation.sharding if self.annotation is not None else Const(None)


def stacked_creation(frame: Frame) -> bool:
    """Whether code in `frame` may run inside `nnx.vmap`/`nnx.scan`: a function (or one it is
    nested in) decorated with one, or passed to one in its module (`nnx.vmap(create, ...)`)."""
    scope: Scope | None = frame.scope
    while scope is not None:
        function = scope.function
        if function is not None:
            if any(d.rsplit(".", 1)[-1] in _STACKING for d in function.decorators):
                return True
            if _passed_to_a_transform(frame, function.name):
                return True
        scope = scope.parent
    return False


def _passed_to_a_transform(frame: Frame, name: str) -> bool:
    return name in _passed_names(frame.module)


_PASSED = re.compile(r"\b(?:vmap|scan)\((?=\s*(\w+))")
"""A `vmap(` or `scan(` and the word passed first (read ahead, so that `vmap(vmap(f` finds both)."""
_PASSED_NAMES: weakref.WeakKeyDictionary[ModuleInfo, frozenset[str]] = weakref.WeakKeyDictionary()


def _passed_names(module: ModuleInfo) -> frozenset[str]:
    """The words a module passes first to `vmap(` or `scan(`, read once per module: every
    `nnx.Param(...)` evaluated in a function asked for its function, and each question searched
    the text of every segment that calls either (a test class of thousands of lines, 645 times
    in flax's `tests/nnx/transforms_test.py`)."""
    found = _PASSED_NAMES.get(module)
    if found is None:
        segments = sorted({i for transform in _STACKING for i in module.call_index.get(transform, ())})
        texts = (module.source.segments[i].text for i in segments)
        found = _PASSED_NAMES[module] = frozenset(m.group(1) for t in texts for m in _PASSED.finditer(t))
    return found


@calls(*(f"flax.nnx.{kind}" for kind in VARIABLE_KINDS))
def _variable(call: CallArgs) -> Value | None:
    """`nnx.Param(init(key, (d, f)), out_sharding=(...))`: the array as evaluated (with the
    sharding it was created with, if any), else an array of the shape the call shows."""
    from shardls.analysis.recognizers.nnx.params import variable_param

    if stacked_creation(call.frame):
        return None
    param = variable_param(call)
    given = call.get(0, "value")
    array = given if isinstance(given, ArrayV) else ArrayV(param.shape, param.dtype)
    return VariableV(call.qualname.rsplit(".", 1)[-1], array, param.annotation)


@attributes(VariableV)
def _variable_attribute(
    library: Library, evaluator: Evaluator, base: Value, attr: str, frame: Frame
) -> Value | None:
    if not isinstance(base, VariableV):
        return None
    if attr in ("value", "raw_value"):
        return base.value
    if attr in ("sharding_names", "out_sharding", "sharding"):
        return base.sharding_names
    if attr in _FORWARDED:
        return array_attributes(library, evaluator, base.value, attr, frame)
    return None


@methods(VariableV, "get_value")
def _get_value(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    assert isinstance(method.base, VariableV)
    return method.base.value


@subscripts
def _whole_value(base: Value, index: Value | slice) -> Value | None:
    """`x[...]`: the variable's whole value (Flax's spelling of `x.value` since 0.12)."""
    if isinstance(base, VariableV) and isinstance(index, Ref) and index.qualname == "builtins.Ellipsis":
        return base.value
    return None
