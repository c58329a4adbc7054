"""numpy/JAX functions whose result shape follows from their operands' shapes: elementwise
functions, reductions over `axis=`, and stacking.

Real code rarely places a freshly created array; it places one it has just computed:
`jax.device_put(v / jnp.linalg.norm(v, axis=-1)[..., None], sharding)`, `jnp.stack([x] * n)`.
Each of these keeps the rank (and every size it can) known, so the site still gets a layout.
Anything the shape rules here do not cover exactly (an axis out of range, operands of different
shapes to stack) gives an array of unknown rank, never a guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.convert import dtype_of, python_scalar_array, shape_of
from shardls.analysis.library.registry import calls, methods
from shardls.analysis.shapes import broadcast
from shardls.analysis.values import ArrayV, BoundMethod, Const, Seq, Unknown, Value, as_int
from shardls.core import DType, parse_dtype
from shardls.core.dtypes import accumulated, cumulated, default_int, inexact
from shardls.core.typing.promotion import result_type

_MODULES = ("jax.numpy", "numpy")

_ELEMENTWISE = (
    *(
        f"{module}.{name}"
        for module in _MODULES
        for name in (
            "abs",
            "absolute",
            "ceil",
            "clip",
            "conj",
            "cos",
            "cosh",
            "exp",
            "exp2",
            "expm1",
            "floor",
            "log",
            "log1p",
            "log2",
            "negative",
            "reciprocal",
            "round",
            "sign",
            "sin",
            "sinh",
            "sqrt",
            "square",
            "tan",
            "tanh",
            "cumsum",
            "cumprod",
        )
    ),
    *(
        f"jax.nn.{name}"
        for name in (
            "celu",
            "elu",
            "gelu",
            "glu",
            "hard_tanh",
            "leaky_relu",
            "log_sigmoid",
            "log_softmax",
            "relu",
            "relu6",
            "selu",
            "sigmoid",
            "silu",
            "soft_sign",
            "softmax",
            "softplus",
            "swish",
        )
    ),
    "jax.lax.rsqrt",
    "jax.lax.stop_gradient",
    "jax.lax.optimization_barrier",
)
"""Same shape as the first operand (and laid out like it). `cumsum`/`cumprod` flatten when no
axis is given, and `glu` halves an axis: both are handled apart below."""

_PYTREE_FUNCTIONS = frozenset({"jax.lax.stop_gradient", "jax.lax.optimization_barrier"})
"""Those that take any pytree (an unknown operand may be a tree, not an array)."""

_REDUCTIONS = {
    **{
        f"{module}.{name}": name
        for module in _MODULES
        for name in (
            "sum",
            "mean",
            "max",
            "min",
            "amax",
            "amin",
            "prod",
            "std",
            "var",
            "any",
            "all",
            "argmax",
            "argmin",
            "nansum",
            "nanmean",
            "nanmax",
            "nanmin",
            "median",
        )
    },
    **{f"{module}.linalg.norm": "norm" for module in _MODULES},
    "jax.nn.logsumexp": "logsumexp",
    "jax.scipy.special.logsumexp": "logsumexp",
}
"""Reductions by their name: the result drops (or with `keepdims=True` keeps as 1) the axes of
`axis=`, all of them when no axis is given."""

_METHOD_REDUCTIONS = ("sum", "mean", "max", "min", "prod", "std", "var", "any", "all", "argmax", "argmin")

_BOOL = parse_dtype("bool")

_ACCUMULATING = frozenset({"sum", "prod", "nansum"})
_INEXACT_REDUCTIONS = frozenset({"mean", "std", "var", "nanmean", "median", "norm", "logsumexp"})
_INEXACT_FUNCTIONS = frozenset(
    {"cos", "cosh", "exp", "exp2", "expm1", "log", "log1p", "log2", "sin", "sinh", "sqrt", "tan", "tanh"}
)
"""Elementwise functions that give a float of an integer or bool operand (with jnp's
`reciprocal`; numpy's keeps integers)."""
_KEEP_BOOL = frozenset({"abs", "absolute", "ceil", "floor", "max", "min", "amax", "amin", "nanmax", "nanmin"})
"""Those that keep a bool operand's dtype in JAX and numpy; the other functions here turn bools
into another type or reject them, so a bool operand gives a dtype not known here."""


def _axis_position(name: str) -> int:
    """Where `axis` is among the positional parameters (`norm(x, ord, axis)`)."""
    return 2 if name == "norm" else 1


def _result_dtype(name: str, dtype: DType | None, *, x64: bool, numpy: bool | None) -> DType | None:
    """The result's dtype by JAX's (or, for `numpy.` functions, numpy's) rules; `numpy` None for a
    method, whose array may be either: the rules agree there except for the floats a bool or an
    integer gives with x64, left unknown."""
    if name in ("any", "all"):
        return _BOOL
    if name in ("argmax", "argmin"):
        return default_int(x64=x64)
    if dtype is None:
        return None
    if name in _ACCUMULATING:
        return accumulated(dtype, x64=x64, numpy=bool(numpy))
    if name in ("cumsum", "cumprod"):
        return cumulated(dtype, x64=x64, numpy=bool(numpy))
    ufunc = name in _INEXACT_FUNCTIONS or (name == "reciprocal" and not numpy)
    if ufunc or name in _INEXACT_REDUCTIONS:
        result = inexact(dtype, x64=x64, numpy=bool(numpy), ufunc=ufunc)
        return None if numpy is None and x64 and result != dtype else result
    if dtype == _BOOL and name not in _KEEP_BOOL:
        return None
    return dtype


def reduced(array: ArrayV, axis: Value | None, keepdims: Value | None, dtype: DType | None) -> ArrayV:
    """`array` reduced over `axis` (None: every axis) into `dtype`; unknown rank when the axes are
    not known."""
    if keepdims is not None and not isinstance(keepdims, Const):
        return ArrayV(None, dtype)
    keep = keepdims is not None and bool(keepdims.value)
    if array.shape is None:
        # Reduced over every axis, any array is one number (`jnp.mean(loss_per_token)`).
        every = axis is None or (isinstance(axis, Const) and axis.value is None)
        return ArrayV((), dtype) if every and not keep else ArrayV(None, dtype)
    rank = len(array.shape)
    axes = _axes(axis, rank)
    if axes is None:
        return ArrayV(None, dtype)
    if keep:
        return ArrayV(tuple(Const(1) if i in axes else d for i, d in enumerate(array.shape)), dtype)
    return ArrayV(tuple(d for i, d in enumerate(array.shape) if i not in axes), dtype)


def _axes(axis: Value | None, rank: int) -> frozenset[int] | None:
    """The axes an `axis=` argument names, normalised; every axis for None; None when unknown or
    out of range (JAX raises there)."""
    if axis is None or (isinstance(axis, Const) and axis.value is None):
        return frozenset(range(rank))
    items = axis.items if isinstance(axis, Seq) else (axis,)
    found = set()
    for item in items:
        index = as_int(item)
        if index is None or not -rank <= index < rank:
            return None
        found.add(index % rank)
    return frozenset(found) if len(found) == len(items) else None


@calls(*(qualname for qualname in _REDUCTIONS if qualname != "numpy.prod"))
def array_reduction(call: CallArgs) -> Value | None:
    """A reduction of an array. `numpy.prod` is registered by the builtins (the product of a
    shape's ints), which hands an array on to this."""
    array = call.get(0, "a", "x")
    if isinstance(array, Unknown):
        array = ArrayV(None)  # whatever it is, the result is an array (of unknown rank)
    if not isinstance(array, ArrayV):
        return None
    name = _REDUCTIONS[call.qualname]
    dtype = _stated_dtype(call) or _result_dtype(
        name, array.dtype, x64=call.library.environment.x64, numpy=call.qualname.startswith("numpy.")
    )
    return reduced(array, call.get(_axis_position(name), "axis"), call.get(None, "keepdims"), dtype)


def _stated_dtype(call: CallArgs) -> DType | None:
    """`jnp.sum(x, dtype=jnp.float32)`: the dtype asked for."""
    return dtype_of(call.get(None, "dtype"), call.library.environment.x64)


@methods(ArrayV, *_METHOD_REDUCTIONS)
def _reduction_method(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    array = method.base
    assert isinstance(array, ArrayV)
    dtype = _stated_dtype(call) or _result_dtype(
        method.name, array.dtype, x64=library.environment.x64, numpy=None
    )
    return reduced(array, call.get(0, "axis"), call.get(None, "keepdims"), dtype)


@calls(*_ELEMENTWISE)
def _elementwise(call: CallArgs) -> Value | None:
    array = call.get(0, "x", "a", "operand")
    if isinstance(array, Unknown) and call.qualname not in _PYTREE_FUNCTIONS:
        array = ArrayV(None)  # whatever it is, the result is an array (of unknown rank)
    if not isinstance(array, ArrayV):
        return None
    name = call.qualname.rsplit(".", 1)[-1]
    dtype = _elementwise_dtype(call, name, array.dtype)
    if dtype != array.dtype:
        array = replace(array, dtype=dtype, typed=None)
    if name in ("cumsum", "cumprod"):
        axis = call.get(1, "axis")
        if axis is None or (isinstance(axis, Const) and axis.value is None):
            return ArrayV(None if array.shape is None else (_product(array.shape),), array.dtype)
        return ArrayV(array.shape, array.dtype)
    if name == "glu":
        return _glu(array, call.get(1, "axis"))
    return array


def _elementwise_dtype(call: CallArgs, name: str, dtype: DType | None) -> DType | None:
    """An activation of `jax.nn` keeps a floating operand's dtype; of an integer or bool one it
    gives a float, keeps it or raises, by function, so that dtype is not known here."""
    if call.qualname.startswith("jax.nn."):
        return dtype if dtype is None or dtype.name.startswith(("float", "bfloat", "complex")) else None
    if call.qualname.startswith("jax.lax."):
        return dtype
    stated = _stated_dtype(call) if name in ("cumsum", "cumprod") else None
    return stated or _result_dtype(
        name, dtype, x64=call.library.environment.x64, numpy=call.qualname.startswith("numpy.")
    )


def _glu(array: ArrayV, axis: Value | None) -> ArrayV:
    """`jax.nn.glu(x, axis=-1)` halves the axis it splits."""
    if array.shape is None:
        return ArrayV(None, array.dtype)
    axes = _axes(axis if axis is not None else Const(-1), len(array.shape))
    if axes is None or len(axes) != 1:
        return ArrayV(None, array.dtype)
    (index,) = axes
    size = as_int(array.shape[index])
    half: Value = Const(size // 2) if size is not None else Unknown("half of an unknown size")
    return ArrayV(tuple(half if i == index else d for i, d in enumerate(array.shape)), array.dtype)


def _product(shape: Sequence[Value]) -> Value:
    sizes = [as_int(d) for d in shape]
    total = 1
    for size in sizes:
        if size is None:
            return Unknown("size of a flattened array")
        total *= size
    return Const(total)


@calls("jax.numpy.stack", "numpy.stack")
def _stack(call: CallArgs) -> Value | None:
    """`jnp.stack(arrays, axis=0)`: arrays of one shape gain an axis of their count."""
    arrays = _same_arrays(call.get(0, "arrays"))
    if arrays is None:
        return None
    shape, dtype = arrays[0].shape, arrays[0].dtype
    if shape is None:
        return ArrayV(None, dtype)
    axes = _axes(call.get(1, "axis") or Const(0), len(shape) + 1)
    if axes is None or len(axes) != 1:
        return ArrayV(None, dtype)
    (index,) = axes
    count = Const(len(arrays))
    return ArrayV((*shape[:index], count, *shape[index:]), dtype)


@calls("jax.numpy.concatenate", "numpy.concatenate")
def _concatenate(call: CallArgs) -> Value | None:
    """`jnp.concatenate(arrays, axis=0)`: the sizes along the axis add up, the other sizes are
    those of any operand (JAX rejects operands that differ there, or in rank). So one operand of
    known shape gives the rank and the other sizes, also beside operands not known here
    (`jnp.concatenate([prompt, jnp.full((prompt.shape[0], gen_length), mask_id)], axis=1)`,
    bonsai llada); the size along the axis is then unknown."""
    arrays = call.get(0, "arrays")
    if not isinstance(arrays, Seq) or not arrays.items:
        return None
    shapes = [a.shape for a in arrays.items if isinstance(a, ArrayV) and a.shape is not None]
    dtypes = {a.dtype if isinstance(a, ArrayV) else None for a in arrays.items}
    dtype = next(iter(dtypes)) if len(dtypes) == 1 else None
    if not shapes or len({len(s) for s in shapes}) != 1 or not shapes[0]:
        return ArrayV(None, dtype) if shapes else None
    axes = _axes(call.get(1, "axis") or Const(0), len(shapes[0]))
    if axes is None or len(axes) != 1:
        return ArrayV(None, dtype)
    (index,) = axes
    joined = (
        _sum([s[index] for s in shapes])
        if len(shapes) == len(arrays.items)
        else Unknown("sum of sizes not all known")
    )
    others = [_first_known([s[i] for s in shapes]) for i in range(len(shapes[0]))]
    return ArrayV(tuple(joined if i == index else d for i, d in enumerate(others)), dtype)


def _first_known(sizes: Sequence[Value]) -> Value:
    """One size that operands must share: a known one when any is known."""
    return next((size for size in sizes if as_int(size) is not None), sizes[0])


def _sum(sizes: Sequence[Value]) -> Value:
    known = [as_int(size) for size in sizes]
    if any(size is None for size in known):
        return Unknown("sum of sizes not all known")
    return Const(sum(size for size in known if size is not None))


def _same_arrays(value: Value | None) -> list[ArrayV] | None:
    """The operands of a stack when they are arrays of one shape and dtype (else None)."""
    if not isinstance(value, Seq) or not value.items:
        return None
    arrays = [item for item in value.items if isinstance(item, ArrayV)]
    if len(arrays) != len(value.items):
        return None
    if len({(a.shape, a.dtype) for a in arrays}) != 1:
        return None
    return arrays


@calls("jax.numpy.expand_dims", "numpy.expand_dims")
def _expand_dims(call: CallArgs) -> Value | None:
    """`jnp.expand_dims(x, axis)`: axes of 1 where the result's `axis` says."""
    array, axis = call.get(0, "a"), call.get(1, "axis")
    if not isinstance(array, ArrayV) or axis is None:
        return None
    count = len(axis.items) if isinstance(axis, Seq) else 1
    axes = _axes(axis, len(array.shape) + count) if array.shape is not None else None
    if array.shape is None or axes is None:
        return ArrayV(None, array.dtype)
    rest = iter(array.shape)
    return ArrayV(
        tuple(Const(1) if i in axes else next(rest) for i in range(len(array.shape) + count)), array.dtype
    )


@calls("jax.numpy.broadcast_to", "numpy.broadcast_to")
def _broadcast_to(call: CallArgs) -> Value | None:
    """`jnp.broadcast_to(x, shape)`: exactly `shape` (JAX raises when `x` does not broadcast)."""
    shape = shape_of(call.get(1, "shape"))
    if shape is None:
        return None
    array = call.get(0, "array")
    return ArrayV(shape, array.dtype if isinstance(array, ArrayV) else None)


@calls("jax.numpy.where", "numpy.where")
def _where(call: CallArgs) -> Value | None:
    """`jnp.where(condition, x, y)`: the broadcast of the three (the one-argument form is not an
    array of known shape)."""
    if len(call.args) != 3:
        return None
    shapes = [a.shape if isinstance(a, ArrayV) else () if isinstance(a, Const) else None for a in call.args]
    if any(shape is None for shape in shapes):
        return None
    result: tuple[Value, ...] | None = ()
    for shape in shapes:
        assert shape is not None
        result = broadcast(result, shape) if result is not None else None
    return ArrayV(result, _where_dtype(call.args[1:], call.library.environment.x64))


def _where_dtype(cases: Sequence[Value], x64: bool) -> DType | None:
    """The dtype JAX promotes the two cases to. A Python number is weakly typed (`jnp.where(c, 1,
    0)` is int32, `jnp.where(c, x, 0)` has `x`'s dtype); a 0-d array may be weak or not (`jnp.asarray
    (0)` is), so a result that depends on which is not known here; nor, with x64, one of two
    cases of different types (the lattice here is JAX's without x64)."""
    options: list[list[tuple[DType, bool]]] = []
    for case in cases:
        if isinstance(case, Const) and type(case.value) in (bool, int, float):
            scalar = python_scalar_array(case, x64)
            assert isinstance(scalar, ArrayV) and scalar.dtype is not None
            options.append([(scalar.dtype, not isinstance(case.value, bool))])
        elif isinstance(case, ArrayV) and case.dtype is not None:
            options.append(
                [(case.dtype, False), (case.dtype, True)] if case.shape == () else [(case.dtype, False)]
            )
        else:
            return None
    if x64:
        dtypes = {dtype for case in options for dtype, _ in case}
        return dtypes.pop() if len(dtypes) == 1 else None
    results = {result_type(x, y)[0] for x in options[0] for y in options[1]}
    return results.pop() if len(results) == 1 else None


def einsum_labels(subscripts: str, operands: Sequence[Value]) -> tuple[Value, ...] | None:
    """`jnp.einsum("BT,k->BTk", positions, freq)` when some operand's shape is not known: the
    explicit output (`->`, no `...`) still fixes the rank. Each size is taken from an operand
    whose shape is known, else named after its label (`B`); None when a known shape does not fit
    its term (JAX raises) or the output needs `...`."""
    inputs, arrow, output = subscripts.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if not arrow or "." in subscripts or len(terms) != len(operands) or not output.isalpha():
        return None
    sizes: dict[str, Value] = {}
    for term, operand in zip(terms, operands):
        shape = operand.shape if isinstance(operand, ArrayV) else None
        if shape is None:
            continue
        if len(shape) != len(term):
            return None
        for label, size in zip(term, shape):
            if as_int(size) is not None:
                sizes.setdefault(label, size)
    used = set(inputs.replace(",", ""))
    if any(label not in used for label in output):
        return None
    return tuple(
        sizes.get(label) or Unknown(f"size of einsum label {label!r}", symbol=label) for label in output
    )
