"""Python built-ins, `math` and `dataclasses`: enough to follow config arithmetic."""

from __future__ import annotations

import ast
import functools
import math
from collections.abc import Callable

from shardls.analysis.evaluation.operators import assuming
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.array_functions import array_reduction
from shardls.analysis.library.key_paths import KEY_QUALNAMES, KeyV, is_key
from shardls.analysis.library.nnx_variables import VARIABLE_KINDS, VariableV
from shardls.analysis.library.registry import calls, methods
from shardls.analysis.values import (
    ArrayV,
    BoundMethod,
    Const,
    DevicesV,
    DictV,
    InstanceV,
    Origin,
    PathV,
    Ref,
    Seq,
    SetV,
    StreamV,
    Unknown,
    UnknownInt,
    Value,
    as_int,
    as_str,
    assumption_of,
)


def _ints(values: list[Value]) -> list[int] | None:
    ints = [as_int(v) for v in values]
    return None if any(i is None for i in ints) else [i for i in ints if i is not None]


def _items(value: Value | None) -> tuple[Value, ...] | None:
    if isinstance(value, (Seq, SetV)):
        return value.items
    if isinstance(value, DictV):
        return value.keys if _known_keys(value) else None
    if isinstance(value, Const) and isinstance(value.value, str):
        return tuple(Const(c) for c in value.value)
    return None


def _known_keys(value: DictV) -> bool:
    """Whether every key is known: a dict with an unknown key (an NNX state whose module sets
    attributes shardls cannot see) has neither a known length nor a known list of items."""
    return all(isinstance(key, Const) for key in value.keys)


def _bounded(call: CallArgs, value: object) -> Value:
    return call.evaluator.bounded(value, call.node, call.frame, "computed")


@calls("builtins.len")
def _len(call: CallArgs) -> Value | None:
    target = call.get(0)
    items = _items(target)
    if items is not None:
        return assuming(_bounded(call, len(items)), target)
    if isinstance(target, ArrayV) and target.shape:
        return target.shape[0]
    if isinstance(target, DevicesV) and target.shape is None:
        return target.count  # `len(jax.devices())`: the device count, with its origin
    return UnknownInt("len() of a value not known here", symbol=_source_symbol(call.node))


def _source_symbol(node: ast.expr) -> str | None:
    """A short expression's source, to name its unknown value (`len(self.cpu_devices)`)."""
    text = ast.unparse(node)
    return text if len(text) <= 40 else None


@calls("builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.abs", "builtins.round")
def _convert(call: CallArgs) -> Value | None:
    value = call.get(0)
    if isinstance(value, KeyV) and call.qualname == "builtins.str":
        return Const(value.text())
    if isinstance(value, PathV) and call.qualname == "builtins.str":
        return Const(value.path, origin=Origin(f"path {value.path}"))
    if not isinstance(value, Const):
        if call.qualname == "builtins.int" and value is not None and not isinstance(value, (Seq, DictV)):
            return UnknownInt("int() of a value not known here", symbol=_source_symbol(call.node))
        return None
    function = {"int": int, "float": float, "bool": bool, "str": str, "abs": abs, "round": round}
    name = call.qualname.rsplit(".", 1)[-1]
    try:
        result = function[name](value.value)  # type: ignore[operator]
    except Exception:
        return Unknown(f"{name}() of an invalid value")
    if name == "str" and isinstance(value.value, str):
        return value
    return assuming(_bounded(call, result), value)


@calls("builtins.min", "builtins.max", "builtins.sum", "math.prod", "numpy.prod")
def _reduce(call: CallArgs) -> Value | None:
    """The reduction of known ints, as assumed as any number it is computed from (the default
    device count summed, multiplied or compared stays an assumption); None for a form it does not
    compute (`key=`, `numpy.prod`'s `axis`/`initial`, a start that is not a known int)."""
    name = call.qualname.rsplit(".", 1)[-1]
    if name == "prod" and isinstance(call.get(0, "a"), ArrayV):
        return array_reduction(call)  # `np.prod(x)` of an array, not of a shape
    operands = _operands(call, name)
    if operands is None:
        return None
    values, start = operands
    ints = _ints(values)
    if ints is None:
        return None
    result: int | None
    if name in ("min", "max"):
        default = call.kwargs.get("default")
        if not ints:
            return default
        result = min(ints) if name == "min" else max(ints)
    elif name == "sum":
        result = sum(ints, start)
    else:
        result = start
        for i in ints:
            result *= i
            if abs(result).bit_length() > call.evaluator.limits.int_bits:
                return Unknown("integer too large")
    return assuming(_bounded(call, result), *values, *call.args, *call.kwargs.values())


def _operands(call: CallArgs, name: str) -> tuple[list[Value], int] | None:
    """The numbers a reduction reads and the number it starts from."""
    if name in ("min", "max"):
        if set(call.kwargs) - {"default"}:
            return None
        values = list(call.args)
        start = 0
    elif call.qualname == "numpy.prod":
        if len(call.args) != 1 or call.kwargs:
            return None
        values, start = list(call.args), 1
    else:
        given = call.get(1, "start") if name == "sum" else call.kwargs.get("start")
        begin = as_int(given) if given is not None else (0 if name == "sum" else 1)
        if begin is None or len(call.args) > (2 if name == "sum" else 1):
            return None
        values, start = list(call.args[:1]), begin
    if len(values) == 1:
        items = _items(values[0])
        if items is None:
            return None
        values = list(items)
    return values, start


@calls("math.ceil", "math.floor", "math.sqrt", "math.log2")
def _math(call: CallArgs) -> Value | None:
    value = call.get(0)
    if not isinstance(value, Const) or not isinstance(value.value, int | float):
        return None
    name = call.qualname.rsplit(".", 1)[-1]
    try:
        return assuming(_bounded(call, getattr(math, name)(value.value)), value)
    except (ValueError, OverflowError):
        return Unknown(f"math.{name} of an invalid value")


@calls("builtins.tuple", "builtins.list", "builtins.sorted", "builtins.reversed")
def _sequence(call: CallArgs) -> Value | None:
    if not call.args:
        return Seq((), call.qualname.endswith("list"))
    items = _items(call.args[0])
    if items is None:
        return None
    if call.qualname.endswith("sorted"):
        if not all(isinstance(i, Const) for i in items):
            return None
        try:
            items = tuple(sorted(items, key=lambda c: c.value))  # type: ignore[attr-defined]
        except TypeError:
            return None
    if call.qualname.endswith("reversed"):
        items = items[::-1]
    return Seq(items, call.qualname.endswith(("list", "sorted")))


@calls("builtins.range")
def _range(call: CallArgs) -> Value | None:
    bounds = _ints(call.args)
    if bounds is None or not 1 <= len(bounds) <= 3 or (len(bounds) == 3 and bounds[2] == 0):
        return None
    numbers = range(*bounds)
    limit = call.evaluator.limits.collection
    if len(numbers[: limit + 1]) > limit:  # `len` of the whole range overflows past sys.maxsize
        return Unknown("range too long")
    assumed = assumption_of(*call.args)
    origin = Origin("computed", assumption=assumed) if assumed is not None else None
    return Seq(tuple(Const(i, origin=origin) for i in numbers), origin=origin)


@calls("builtins.zip")
def _zip(call: CallArgs) -> Value | None:
    columns = [_items(a) for a in call.args]
    if any(c is None for c in columns):
        return None
    return Seq(tuple(Seq(row) for row in zip(*(c for c in columns if c is not None))))


@calls("builtins.enumerate")
def _enumerate(call: CallArgs) -> Value | None:
    stream = call.get(0)
    if isinstance(stream, StreamV):  # a generator's items, counted from 0 up to a number not known
        return StreamV(Seq((UnknownInt("the index enumerate() gives"), stream.item)))
    items = _items(stream)
    if items is None:
        return None
    return Seq(tuple(Seq((Const(i), item)) for i, item in enumerate(items)))


@calls("builtins.dict")
def _dict(call: CallArgs) -> Value | None:
    keys: list[Value] = []
    values: list[Value] = []
    if call.args:
        base = call.args[0]
        if isinstance(base, DictV):
            keys.extend(base.keys)
            values.extend(base.values)
        elif isinstance(base, Seq):
            for pair in base.items:
                if not isinstance(pair, Seq) or len(pair.items) != 2:
                    return None
                keys.append(pair.items[0])
                values.append(pair.items[1])
        else:
            return None
    for name, value in call.kwargs.items():
        keys.append(Const(name))
        values.append(value)
    return DictV(tuple(keys), tuple(values))


_KINDS_OF: dict[str, Callable[[Value], bool]] = {
    "builtins.tuple": lambda v: isinstance(v, Seq) and not v.is_list,
    "builtins.list": lambda v: isinstance(v, Seq) and v.is_list,
    "builtins.dict": lambda v: isinstance(v, DictV),
    "builtins.set": lambda v: isinstance(v, SetV),
    "builtins.int": lambda v: isinstance(v, Const) and type(v.value) is int,
    "builtins.str": lambda v: isinstance(v, Const) and isinstance(v.value, str),
    **dict.fromkeys(
        ("collections.abc.Sequence", "typing.Sequence"),
        lambda v: isinstance(v, Seq) or (isinstance(v, Const) and isinstance(v.value, str | bytes)),
    ),
    **{name: functools.partial(is_key, qualname=name) for name in KEY_QUALNAMES},
}
"""What `isinstance(value, kind)` answers for the values whose kind the analysis knows."""

_KNOWN_KINDS = (Seq, DictV, SetV, Const, ArrayV, KeyV)


_VARIABLE = "flax.nnx.variablelib.Variable"
"""Every NNX variable type derives from it (`nnx.Variable` itself reads as `nnx.Param`, see
`library.canonical`, so only this spelling says "any variable")."""


def _variable_kind(value: Value, name: str) -> bool | None:
    """`isinstance(x, nnx.variablelib.Variable)` / `isinstance(x, nnx.Param)`; None when the
    spelling `nnx.Variable` (read as `nnx.Param`) meets a variable of another type."""
    if not isinstance(value, VariableV):
        return False
    if name == _VARIABLE:
        return True
    if name == "flax.nnx.Param":
        return True if value.kind == "Param" else None
    return value.kind == name.rsplit(".", 1)[-1]  # a `Param` (or a plain `nnx.Variable`) is no `BatchStat`


@calls("builtins.isinstance")
def _isinstance(call: CallArgs) -> Value | None:
    """`isinstance(k, tuple)` for a value whose kind is known (a tuple, a list, an array, an NNX
    variable), so that `k, s = k if isinstance(k, tuple) else (k, None)` takes the branch the
    value takes."""
    value, kinds = call.get(0, "obj"), call.get(1, "class_or_tuple")
    names = [k.qualname for k in (kinds.items if isinstance(kinds, Seq) else (kinds,)) if isinstance(k, Ref)]
    variables = [n for n in names if n == _VARIABLE or n.removeprefix("flax.nnx.") in VARIABLE_KINDS]
    if not isinstance(value, (*_KNOWN_KINDS, VariableV)) or not names:
        return Unknown("isinstance() of a value of unknown kind")
    if any(n not in _KINDS_OF and n not in variables for n in names):
        return Unknown("isinstance() of a value of unknown kind")
    if isinstance(value, Const) and value.value is None:
        return Const(False)
    answers = [_KINDS_OF[n](value) if n in _KINDS_OF else _variable_kind(value, n) for n in names]
    if any(answers):
        return Const(True)
    return Unknown("isinstance() of a variable of another type") if None in answers else Const(False)


@calls("builtins.getattr")
def _getattr(call: CallArgs) -> Value | None:
    """`getattr(x, "value", x)`, Flax's idiom for "a variable's array, or the array itself": the
    attribute when it is known, the default when the object is known to lack it (a JAX array
    has no `value`)."""
    obj, name, default = call.get(0), as_str(call.get(1) or Const(None)), call.get(2)
    if obj is None or name is None:
        return Unknown("getattr() of an unknown attribute")
    found = call.evaluator.attribute(obj, name, call.node, call.frame)
    if not isinstance(found, Unknown):
        return found
    if default is not None and isinstance(obj, ArrayV) and name == "value":
        return default
    return found


@calls("builtins.print", "builtins.super")
def _opaque(call: CallArgs) -> Value | None:
    return Unknown(f"{call.qualname.rsplit('.', 1)[-1]}() is not modelled")


@calls("dataclasses.field", "flax.struct.field", "chex.field")
def _field(call: CallArgs) -> Value | None:
    """`field(default=x)` is x; `field(default_factory=f)` is f()."""
    default = call.get(None, "default")
    if default is not None:
        return default
    factory = call.get(None, "default_factory")
    if factory is not None:
        return call.evaluator.call(factory, [], {}, None, call.frame)
    return Unknown("field without a default")


@calls("dataclasses.replace")
def _replace(call: CallArgs) -> Value | None:
    instance = call.get(0)
    if not isinstance(instance, InstanceV):
        return None
    fields = dict(instance.fields)
    fields.update(call.kwargs)
    return InstanceV(instance.cls, tuple(fields.items()), call.node)


@methods(InstanceV, "replace")
def _instance_replace(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    assert isinstance(method.base, InstanceV)
    fields = dict(method.base.fields)
    fields.update(call.kwargs)
    return InstanceV(method.base.cls, tuple(fields.items()), call.node)


@methods(DictV, "get")
def _dict_get(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    assert isinstance(method.base, DictV)
    key = call.get(0)
    if not isinstance(key, Const):
        return None
    found = method.base.get(key.value)
    return found if found is not None else (call.get(1) or Const(None))


@methods(DictV, "keys", "values", "items")
def _dict_views(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    base = method.base
    assert isinstance(base, DictV)
    if not _known_keys(base):
        return None
    if method.name == "keys":
        return Seq(base.keys)
    if method.name == "values":
        return Seq(base.values)
    return Seq(tuple(Seq((k, v)) for k, v in zip(base.keys, base.values)))


_SPLITTERS = frozenset({"split", "rsplit", "partition", "rpartition"})
_STRING_RESULTS = frozenset(
    {"strip", "lstrip", "rstrip", "lower", "upper", "replace", "removeprefix", "removesuffix"}
)
_STRING_TESTS = frozenset({"startswith", "endswith", "isdigit", "isnumeric"})


@methods(Const, *_SPLITTERS, *_STRING_RESULTS, *_STRING_TESTS, "format", "join")
def _str_methods(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    """The string methods that parse a mesh or size given as text (`'1,-1,1'`, `'dp:2,mp:4'`):
    each part keeps the assumption behind the text (a flag's default stays a default)."""
    text = as_str(method.base)
    if text is None:
        return None
    if method.name == "join":
        items = _items(call.get(0))
        if items is None or not all(isinstance(i, Const) and isinstance(i.value, str) for i in items):
            return None
        joined = text.join(str(i.value) for i in items if isinstance(i, Const))
        return assuming(call.evaluator.bounded(joined, call.node, call.frame), method.base, *items)
    if method.name == "format":
        return None
    if not all(isinstance(a, Const) for a in (*call.args, *call.kwargs.values())):
        return None
    args = [a.value for a in call.args if isinstance(a, Const)]
    kwargs = {k: a.value for k, a in call.kwargs.items() if isinstance(a, Const)}
    try:
        result = getattr(text, method.name)(*args, **kwargs)
    except Exception:
        return Unknown(f"str.{method.name}() of invalid arguments")
    if isinstance(result, list | tuple):
        if len(result) > call.evaluator.limits.collection:
            return Unknown("collection too large")
        parts = tuple(assuming(_bounded(call, part), method.base) for part in result)
        return Seq(parts, is_list=isinstance(result, list))
    return assuming(_bounded(call, result), method.base)
