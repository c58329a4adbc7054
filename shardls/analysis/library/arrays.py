"""Arrays with a known shape: creation functions, random initializers, ShapeDtypeStruct, arrays
made from data (`jnp.array([[1, 2]])`, `jnp.float32(1.0)`), and the array methods and attributes
that keep a shape known (`reshape`, `astype`, `.T`, `.shape`)."""

from __future__ import annotations

import math
from dataclasses import replace

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.convert import dtype_of, shape_of, sharding_of
from shardls.analysis.library.registry import attributes, calls, methods
from shardls.analysis.values import (
    ArrayV,
    BoundMethod,
    Const,
    DevicesV,
    DTypeV,
    Ref,
    Seq,
    Unknown,
    UnknownInt,
    Value,
    as_int,
)
from shardls.core import DType, parse_dtype

_INT32 = parse_dtype("int32")

_DTYPE_NAMES = frozenset(
    [
        "bool_",
        "int4",
        "uint4",
        "int8",
        "uint8",
        "int16",
        "uint16",
        "int32",
        "uint32",
        "int64",
        "uint64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "complex64",
        "complex128",
        "float8_e4m3fn",
        "float8_e5m2",
        "float4_e2m1fn",
        "int2",
        "uint2",
    ]
)


def _default_dtype(call: CallArgs) -> DType:
    """numpy defaults to float64, which JAX narrows to float32 unless x64 is enabled."""
    if call.qualname.startswith("numpy."):
        return parse_dtype("float64", x64=call.library.environment.x64)
    return call.library.environment.default_dtype


def _array(
    call: CallArgs, shape: Value | None, dtype_value: Value | None, default: DType | None = None
) -> Value:
    if isinstance(dtype_value, Const) and isinstance(dtype_value.value, int | float):
        # `jnp.ones(4, 4)`: a number where the dtype goes; JAX raises TypeError before any layout.
        return Unknown(f"{dtype_value.value!r} is not a dtype (JAX raises TypeError)")
    dims = shape_of(shape)
    x64 = call.library.environment.x64
    dtype = dtype_of(dtype_value, x64) if dtype_value is not None else (default or _default_dtype(call))
    sharding = sharding_of(call.get(None, "out_sharding", "device", "sharding"))
    return ArrayV(dims, dtype, sharding)


@calls(
    "jax.numpy.zeros",
    "jax.numpy.ones",
    "jax.numpy.empty",
    "numpy.zeros",
    "numpy.ones",
    "numpy.empty",
)
def _filled(call: CallArgs) -> Value | None:
    return _array(call, call.get(0, "shape"), call.get(1, "dtype"))


@calls("jax.numpy.full", "numpy.full")
def _full(call: CallArgs) -> Value | None:
    return _array(call, call.get(0, "shape"), call.get(2, "dtype"))


@calls(
    "jax.numpy.zeros_like",
    "jax.numpy.ones_like",
    "jax.numpy.empty_like",
    "numpy.zeros_like",
    "numpy.ones_like",
)
def _like(call: CallArgs) -> Value | None:
    base = call.get(0, "a")
    if not isinstance(base, ArrayV):
        return None
    dtype = call.get(1, "dtype")
    return ArrayV(
        base.shape,
        dtype_of(dtype) if dtype is not None else base.dtype,
        sharding_of(call.get(None, "out_sharding", "device")),
    )


@calls("jax.numpy.arange", "numpy.arange")
def _arange(call: CallArgs) -> Value | None:
    """`arange(8)` is int32, `arange(8.0)` the default float; a bound of unknown value leaves
    the length unknown, and the dtype too unless the ints and floats among the known ones (or
    `dtype=`) say it."""
    numbers = [_number(a) for a in call.args[:3]]
    floating = any(isinstance(n, float) for n in numbers)
    default = _default_dtype(call) if floating else None if None in numbers else _INT32
    if not numbers or None in numbers:
        made = _array(call, Seq((Unknown("arange length"),)), call.get(None, "dtype"), default)
        unknown_dtype = default is None and call.get(None, "dtype") is None
        return replace(made, dtype=None) if unknown_dtype and isinstance(made, ArrayV) else made
    bounds = [n for n in numbers if n is not None]
    length = _arange_length(*bounds)
    shape = Seq((Const(length),)) if length is not None else Seq((Unknown("arange length"),))
    return _array(call, shape, call.get(None, "dtype"), default)


@calls("jax.numpy.linspace", "numpy.linspace")
def _linspace(call: CallArgs) -> Value | None:
    """`linspace(start, stop, num=50)` between two numbers: `num` samples of the default float
    (of `dtype=`); bounds that are arrays (a batch of ranges) or `retstep=True` are not followed."""
    bounds = [call.get(0, "start"), call.get(1, "stop")]
    if (
        any(bound is None or _number(bound) is None for bound in bounds)
        or call.get(None, "retstep") is not None
    ):
        return None
    num = call.get(2, "num")
    return _array(call, Seq((num if num is not None else Const(50),)), call.get(5, "dtype"))


def _number(value: Value) -> int | float | None:
    if (
        isinstance(value, Const)
        and isinstance(value.value, int | float)
        and not isinstance(value.value, bool)
    ):
        return value.value
    return None


def _arange_length(*bounds: int | float) -> int | None:
    """numpy's `arange` length: `ceil((stop - start) / step)`, at least 0 (None for a zero step)."""
    start, stop, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
    if step == 0:
        return None
    return max(0, math.ceil((stop - start) / step))


@calls(
    "jax.random.normal",
    "jax.random.uniform",
    "jax.random.truncated_normal",
    "jax.random.bernoulli",
    "jax.random.randint",
    "jax.random.gumbel",
    "jax.random.laplace",
)
def _random(call: CallArgs) -> Value | None:
    return random_array(call, call.qualname.rsplit(".", 1)[-1], keyed=True)


def random_array(call: CallArgs, name: str, keyed: bool) -> Value:
    """The array `jax.random.<name>(key, ...)` makes; `keyed=False` for the same sampler without
    its key argument (`nnx.Rngs(0).normal((8, 1024))`)."""
    shift = 0 if keyed else 1
    position = {"truncated_normal": 3, "bernoulli": 2}.get(name, 1) - shift
    shape = call.get(position, "shape")
    if shape is None:
        shape = Seq(())
    dtype_position = {"normal": 2, "uniform": 2, "randint": 4, "truncated_normal": 4}.get(name)
    default = _INT32 if name == "randint" else parse_dtype("bool") if name == "bernoulli" else None
    return _array(
        call,
        shape,
        call.get(None if dtype_position is None else dtype_position - shift, "dtype"),
        default,
    )


@calls("jax.ShapeDtypeStruct")
def _shape_dtype_struct(call: CallArgs) -> Value | None:
    return _array(call, call.get(0, "shape"), call.get(1, "dtype"))


@calls("numpy.array", "numpy.asarray", "jax.numpy.array", "jax.numpy.asarray")
def _from_data(call: CallArgs) -> Value | None:
    """`jnp.array(0.0)`, `np.asarray([[1, 2], [3, 4]])`, `jnp.asarray(x)`: an array shaped like its
    data. A device list stays a device list (`Mesh(np.array(jax.devices()).reshape(2, 4), ...)`)."""
    data = call.get(0, "object", "a")
    if data is None or isinstance(data, DevicesV):
        return data
    return _converted(call, data, call.get(1, "dtype"))


@calls(*(f"{module}.{name}" for module in ("jax.numpy", "numpy") for name in (*_DTYPE_NAMES, "dtype")))
def _dtype_call(call: CallArgs) -> Value | None:
    """`dtype("bfloat16")` is a dtype; `float32(1.0)` (imported by name) is a scalar of that dtype."""
    if call.qualname.endswith(".dtype"):
        dtype = dtype_of(call.get(0))
        return DTypeV(dtype) if dtype is not None else None
    return _scalar(call, parse_dtype(call.qualname, x64=call.library.environment.x64))


@methods(DTypeV, "__call__")
def _call_dtype(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    """`jnp.float32(1.0)`: `jnp.float32` is a dtype, and calling it converts its argument."""
    assert isinstance(method.base, DTypeV)
    return _scalar(call, method.base.dtype)


def _scalar(call: CallArgs, dtype: DType) -> Value | None:
    """A scalar type applied to data (`jnp.float32(1.0)` is a 0-d array, `jnp.int32([1, 2])` a 1-d one)."""
    data = call.get(0)
    return _converted(call, data, DTypeV(dtype)) if data is not None else None


def _converted(call: CallArgs, data: Value, dtype: Value | None) -> Value:
    """Data as an array: the nesting of its lists gives the shape, its elements the dtype
    (unless one is given)."""
    nested = _NestedData(call.evaluator.limits.collection)
    shape = nested.shape(data)
    return _array(call, Seq(shape) if shape is not None else None, dtype, nested.dtype(call))


_KINDS: tuple[type, ...] = (bool, int, float, complex)
"""Python scalar types in numpy's promotion order: `[1, 2.0]` is a float array."""
_KIND_DTYPES = {bool: "bool", int: "int64", complex: "complex128"}
"""What numpy and JAX make of Python scalars (floats take the default float dtype); without x64
the 64-bit ones narrow to 32 bits, as on a device."""
_MAX_NESTING = 32


class _NestedData:
    """The shape and element types of nested data (`[[1, 2], [3, 4]]`, a list of arrays).

    Reading is bounded by a budget of distinct values; a row repeated by reference
    (`[[0] * 1000] * 1000`) is read once."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.kinds: set[type] = set()
        self.dtypes: set[DType | None] = set()
        self._shapes: dict[int, tuple[Value, ...] | None] = {}

    def shape(self, value: Value, depth: int = 0) -> tuple[Value, ...] | None:
        """None when unknown: an unknown element, ragged rows, or beyond the budget."""
        key = id(value)
        if key not in self._shapes:
            self.budget -= 1
            readable = self.budget >= 0 and depth <= _MAX_NESTING
            self._shapes[key] = self._read(value, depth) if readable else None
        return self._shapes[key]

    def _read(self, value: Value, depth: int) -> tuple[Value, ...] | None:
        if isinstance(value, ArrayV):
            self.dtypes.add(value.dtype)
            return value.shape
        if isinstance(value, Const) and type(value.value) in _KINDS:
            self.kinds.add(type(value.value))
            return ()
        if isinstance(value, UnknownInt):  # `jnp.array([len(tokens)] * 4)`: an int, whatever its value
            self.kinds.add(int)
            return ()
        if not isinstance(value, Seq):
            return None
        rows = {self.shape(item, depth + 1) for item in value.items}
        if None in rows or len(rows) > 1:
            return None
        row = rows.pop() if rows else ()
        assert row is not None
        return (Const(len(value.items)), *row)

    def dtype(self, call: CallArgs) -> DType | None:
        """The arrays' dtype when they alone make up the data; else the widest scalar type's.
        (Arrays mixed with Python numbers promote in ways not modelled: None.)"""
        if self.dtypes:
            return next(iter(self.dtypes)) if len(self.dtypes) == 1 and not self.kinds else None
        widest = max(self.kinds, key=_KINDS.index, default=float)
        if widest is float:
            return _default_dtype(call)
        return parse_dtype(_KIND_DTYPES[widest], x64=call.library.environment.x64)


@methods(ArrayV, "reshape")
def _reshape(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    """`x.reshape(shape)` or `x.reshape(a, b)`."""
    base = method.base
    assert isinstance(base, ArrayV)
    return reshaped(base, call.args)


def reshaped(base: ArrayV, args: list[Value]) -> ArrayV:
    """`base.reshape(*args)`. A single argument that is not a known tuple may be a tuple of any
    length (`x.reshape(q.shape[:1] + (h, -1))`): the rank stays unknown."""
    if len(args) == 1 and not isinstance(args[0], Seq) and as_int(args[0]) is None:
        return ArrayV(None, base.dtype, None)
    requested = args[0].items if len(args) == 1 and isinstance(args[0], Seq) else tuple(args)
    dims = list(requested)
    fills = [i for i, d in enumerate(dims) if as_int(d) == -1]
    if len(fills) == 1 and base.shape is not None:
        known_total = [as_int(d) for d in base.shape]
        others = [as_int(d) for i, d in enumerate(dims) if i != fills[0]]
        if all(k is not None for k in known_total) and all(o is not None and o > 0 for o in others):
            total = math.prod(k for k in known_total if k is not None)
            rest = math.prod(o for o in others if o is not None)
            if rest and total % rest == 0:
                dims[fills[0]] = Const(total // rest)
    return ArrayV(tuple(dims), base.dtype, None)


@methods(ArrayV, "astype")
def _astype(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    base = method.base
    assert isinstance(base, ArrayV)
    return replace(base, dtype=dtype_of(call.get(0, "dtype")) or base.dtype)


@attributes(Ref, ArrayV)
def array_attributes(
    library: Library, evaluator: object, base: Value, attr: str, frame: object
) -> Value | None:
    if isinstance(base, Ref) and base.qualname in ("jax.numpy", "numpy") and attr in _DTYPE_NAMES:
        return DTypeV(parse_dtype(attr, x64=library.environment.x64))
    if not isinstance(base, ArrayV):
        return None
    if attr == "shape":
        return Seq(base.shape) if base.shape is not None else Unknown("shape unknown")
    if attr == "dtype":
        return DTypeV(base.dtype) if base.dtype is not None else Unknown("dtype unknown")
    if attr == "ndim":
        return Const(len(base.shape)) if base.shape is not None else Unknown("rank unknown")
    if attr == "T":
        return ArrayV(tuple(reversed(base.shape)) if base.shape is not None else None, base.dtype)
    if attr == "sharding":
        return base.sharding or Unknown("sharding unknown")
    return None
