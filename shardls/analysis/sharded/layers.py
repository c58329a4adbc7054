"""Calls of Flax NNX layers in Explicit mode: `y = layer(x)` typed as Flax 0.12's `__call__`
computes it, one JAX operation after another with the core's rules, so that its result has the
type `jax.typeof` gives and a call JAX rejects is the underlying operation's problem, at the call.

`nnx.Linear` is `dot_general(x, kernel)` then `+ bias`; `nnx.Embed` a `take` of its table
(`attend` a `dot` with its transpose); `nnx.LayerNorm`/`nnx.RMSNorm` their statistics and
`_normalize`, whose broadcasts with `scale`/`bias` decide the result's sharding. A parameter's
type is its layout when the layer is created, resolved as its site is
(`recognizers/nnx.param_placement`); an unannotated one is created replicated. The context of
the creation is that of the statement being analysed, as for the arrays a placement makes there.

Anything not known (a constructor argument, an initializer, the rules, a stacked layer, an
`eager_sharding=False` parameter, a keyword this module does not model) leaves the result
untyped: never a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shardls.analysis.sharded.propagate import (
    UNREADABLE,
    Unreadable,
    apply,
    dtype_argument,
    has_explicit_axis,
    spec_argument,
    typed,
)
from shardls.analysis.sharded.registry import calls
from shardls.analysis.values import Const, DictV, Ref, Seq, TypedArray, Value, as_int, as_str
from shardls.core import FLOAT32, DType, PartitionSpec, UsageContext
from shardls.core.typing import (
    ShapeError,
    ShardedType,
    astype,
    binary,
    broadcast_to,
    dot,
    dot_general,
    einsum,
    full_like,
    placed,
    reduce,
    reshape,
    scalar,
    take,
    transpose,
    unary,
)
from shardls.core.typing.errors import VALUE_ERROR
from shardls.core.typing.promotion import is_inexact, is_integer, result_type
from shardls.core.typing.results import out_sharding as typed_out_sharding

if TYPE_CHECKING:
    from shardls.analysis.library import CallArgs
    from shardls.analysis.walker import Context

_NNX = "flax.nnx."
_INITIALIZERS = ("flax.nnx.initializers.", "jax.nn.initializers.", "flax.linen.initializers.")
"""Where the plain initializers live (`nnx.initializers.lecun_normal()`, `jax.nn.initializers.zeros`):
a parameter made by one has no annotation, so Flax creates it replicated."""


@dataclass(frozen=True, eq=False)
class LayerV(Value):
    """A layer made by `nnx.Linear(...)` (or another layer of `_LAYERS`): its constructor's
    arguments, and the walker's context it was created in."""

    call: CallArgs
    context: Context

    @property
    def kind(self) -> str:
        return self.call.qualname.removeprefix(_NNX)


# -- the layers' computations, op by op as Flax 0.12 writes them ---------------------------------


def _canonical_dtype(arrays: Sequence[ShardedType | None], dtype: DType | None, inexact: bool) -> DType:
    """`nnx.nn.dtypes.canonicalize_dtype`: `dtype`, else the arrays' common type (a floating one
    when `inexact`)."""
    if dtype is None:
        dtype, _ = result_type(*((a.dtype, a.weak_type) for a in arrays if a is not None))
        if inexact and not is_inexact(dtype):
            dtype, _ = result_type((FLOAT32, False), (dtype, False))
    if inexact and not is_inexact(dtype):
        raise ShapeError(f"Dtype must be inexact: {dtype.name}", VALUE_ERROR)
    return dtype


def _promoted(
    arrays: Sequence[ShardedType | None], dtype: DType | None, inexact: bool = True
) -> list[ShardedType | None]:
    """`nnx.nn.dtypes.promote_dtype`: each array cast to the canonical dtype."""
    common = _canonical_dtype(arrays, dtype, inexact)
    return [None if a is None else astype(a, common) for a in arrays]


def linear(
    x: ShardedType,
    kernel: ShardedType,
    bias: ShardedType | None,
    dtype: DType | None,
    out_sharding: PartitionSpec | None,
) -> ShardedType:
    """`nnx.Linear.__call__`: `dot_general` over x's last dimension and the kernel's first, then
    the bias reshaped to `(1, ..., 1, -1)` added."""
    x_, kernel_, bias_ = _promoted((x, kernel, bias), dtype)
    assert x_ is not None and kernel_ is not None
    y = dot_general(x_, kernel_, (((x_.rank - 1,), (0,)), ((), ())), out_sharding=out_sharding)
    if bias_ is None:
        return y
    return binary("add", y, reshape(bias_, (1,) * (y.rank - 1) + (-1,)))


def linear_general(
    x: ShardedType,
    kernel: ShardedType,
    bias: ShardedType | None,
    axis: tuple[int, ...],
    dtype: DType | None,
    out_sharding: PartitionSpec | None,
) -> ShardedType:
    """`nnx.LinearGeneral.__call__` (no `batch_axis`): `dot_general` of x's `axis` with the
    kernel's leading dimensions, then the bias reshaped to `(1, ..., *out_features)` added."""
    contracted = tuple(sorted(a if a >= 0 else x.rank + a for a in axis))
    if kernel.rank <= len(contracted):  # no output features: Flax's initializers refuse the kernel
        raise ShapeError("LinearGeneral without out_features is not modelled", VALUE_ERROR)
    x_, kernel_, bias_ = _promoted((x, kernel, bias), dtype)
    assert x_ is not None and kernel_ is not None
    numbers = ((contracted, tuple(range(len(contracted)))), ((), ()))
    y = dot_general(x_, kernel_, numbers, out_sharding=out_sharding)
    if bias_ is None:
        return y
    out_features = kernel_.shape[len(contracted) :]
    return binary("add", y, reshape(bias_, (1,) * (x_.rank - len(contracted)) + out_features))


def einsum_layer(
    x: ShardedType,
    kernel: ShardedType,
    bias: ShardedType | None,
    equation: str,
    dtype: DType | None,
    out_sharding: PartitionSpec | None,
) -> ShardedType:
    """`nnx.Einsum.__call__` (an explicit equation without `...`): `jnp.einsum` of x and the
    kernel, then the bias reshaped to the result's rank (its kernel dimensions, 1 elsewhere)."""
    if "->" not in equation or equation.count(",") != 1 or "." in equation:
        raise ShapeError(f"einsum equation {equation!r} is not modelled", VALUE_ERROR)
    operands, result = equation.split("->")
    rhs = operands.split(",")[1]
    if len(rhs) != kernel.rank or len(set(rhs)) != len(rhs):
        raise ShapeError(f"einsum equation {equation!r} does not fit the kernel", VALUE_ERROR)
    x_, kernel_, bias_ = _promoted((x, kernel, bias), dtype)
    assert x_ is not None and kernel_ is not None
    y = einsum(equation, x_, kernel_, out_sharding=out_sharding)
    if bias_ is None:
        return y
    shape = tuple(kernel.shape[rhs.index(c)] if c in rhs else 1 for c in result)
    return binary("add", y, reshape(bias_, shape))


def embed(
    ids: ShardedType,
    table: ShardedType,
    dtype: DType | None,
    out_sharding: PartitionSpec | None,
) -> ShardedType:
    """`nnx.Embed.__call__`: a `take` along the table's rows (with `out_sharding=`, Flax runs the
    take under `auto_axes` and the result has that sharding)."""
    if not is_integer(ids.dtype):
        raise ShapeError("Input type must be an integer or unsigned integer.", VALUE_ERROR)
    (promoted,) = _promoted((table,), dtype, inexact=False)
    assert promoted is not None
    num_embeddings, features = promoted.shape
    if num_embeddings == 1:
        return broadcast_to(promoted, ids.shape + (features,))
    if out_sharding is not None:
        shape = ids.shape + (features,)
        return typed_out_sharding(ids.mesh, out_sharding, shape, promoted.dtype)
    return take(promoted, ids, axis=0)


def attend(
    query: ShardedType, table: ShardedType, dtype: DType | None, out_sharding: PartitionSpec | None
) -> ShardedType:
    """`nnx.Embed.attend`: `jnp.dot(query, embedding.T)`."""
    query_, table_ = _promoted((query, table), dtype)
    assert query_ is not None and table_ is not None
    return dot(query_, transpose(table_), out_sharding=out_sharding)


def normalized(
    x: ShardedType, scale: ShardedType | None, bias: ShardedType | None, dtype: DType | None, use_mean: bool
) -> ShardedType:
    """`nnx.LayerNorm.__call__` (`use_mean`) and `nnx.RMSNorm.__call__` over the last axis:
    `promote_dtype`, `_compute_stats` (fast variance), then `_normalize`."""
    x_, scale, bias = _promoted((x, scale, bias), dtype)
    assert x_ is not None
    mean, var = _statistics(x_, dtype, use_mean)
    stats_shape = (*x_.shape[:-1], 1)
    feature_shape = (1,) * (x_.rank - 1) + x_.shape[-1:]
    y = binary("subtract", x_, reshape(mean, stats_shape))
    mul = unary("sqrt", binary("add", reshape(var, stats_shape), scalar(x_, FLOAT32)))  # lax.rsqrt
    if scale is not None:
        scale = reshape(scale, feature_shape)
        mul = binary("multiply", mul, scale)
    y = binary("multiply", y, mul)
    if bias is not None:
        bias = reshape(bias, feature_shape)
        y = binary("add", y, bias)
    return astype(y, _canonical_dtype((x_, scale, bias), dtype, inexact=True))


def _statistics(x: ShardedType, dtype: DType | None, use_mean: bool) -> tuple[ShardedType, ShardedType]:
    """`_compute_stats` over the last axis, in its order (which decides the first error)."""
    stats, _ = result_type((dtype or x.dtype, False), (FLOAT32, False))
    x = astype(x, stats)
    squared = unary("square", x)
    if not use_mean:
        var = reduce("mean", squared, -1)
        return full_like(var), var
    mean = reduce("mean", x, -1)
    mean_of_squares = reduce("mean", squared, -1)
    difference = binary("subtract", mean_of_squares, unary("square", mean))
    return mean, binary("maximum", scalar(x, FLOAT32), difference)


# -- reading the layer and the call -------------------------------------------------------------


@dataclass(frozen=True)
class _Layer:
    positional: tuple[str, ...]
    """The constructor's positional parameters, in order."""
    keywords: frozenset[str]
    """The constructor's parameters the typing reads or that cannot change a result's type;
    another one given (a custom `dot_general`, `promote_dtype`, ...) leaves the call untyped."""
    defaults: tuple[tuple[str, object], ...] = ()
    """Parameters modelled only at their default value."""


_INIT = frozenset({"dtype", "param_dtype", "rngs", "precision"})
_LAYERS: dict[str, _Layer] = {
    _NNX + "Linear": _Layer(
        ("in_features", "out_features"),
        _INIT | {"use_bias", "kernel_init", "bias_init", "kernel_metadata", "bias_metadata"},
    ),
    _NNX + "LinearGeneral": _Layer(
        ("in_features", "out_features"),
        _INIT | {"axis", "use_bias", "kernel_init", "bias_init", "kernel_metadata", "bias_metadata"},
    ),
    _NNX + "Einsum": _Layer(
        ("einsum_str", "kernel_shape", "bias_shape"),
        _INIT | {"kernel_init", "bias_init", "kernel_metadata", "bias_metadata"},
    ),
    _NNX + "Embed": _Layer(("num_embeddings", "features"), _INIT | {"embedding_init", "embedding_metadata"}),
    _NNX + "LayerNorm": _Layer(
        ("num_features",),
        _INIT
        | {"epsilon", "use_bias", "use_scale", "bias_init", "scale_init", "bias_metadata", "scale_metadata"},
        (("reduction_axes", -1), ("feature_axes", -1), ("use_fast_variance", True)),
    ),
    _NNX + "RMSNorm": _Layer(
        ("num_features",),
        _INIT | {"epsilon", "use_scale", "scale_init", "scale_metadata"},
        (("reduction_axes", -1), ("feature_axes", -1), ("use_fast_variance", True)),
    ),
}
_NONE_ONLY = frozenset(
    {"axis_name", "axis_index_groups", "dot_general", "promote_dtype", "preferred_element_type"}
)
"""Constructor parameters whose default is None, accepted when written as None."""


@calls(*_LAYERS)
def _created(call: CallArgs, base: Value | None) -> Value | None:
    """A layer made where types are recorded, with the context it is made in."""
    context = call.evaluator.context
    if base is not None or call.evaluator.typing is None or context is None:
        return base
    return LayerV(call, context)


Rule = Callable[["LayerV", "CallArgs", TypedArray], Value | None]


def layer_call(layer: LayerV, method: str, call: CallArgs) -> Value | None:
    """`layer(x)` or `layer.attend(q)` (method `__call__` or `attend`): the result with its type,
    or None (an unknown value) when something it depends on is not known."""
    rule = _METHODS.get((layer.kind, method))
    if rule is None or not _readable(layer):
        return None
    x = typed(call.get(0, "inputs", "x", "query"))
    if x is None or len(call.args) > 1:
        return None
    return rule(layer, call, x)


def _readable(layer: LayerV) -> bool:
    """The constructor's arguments are all modelled (positional ones within the positional
    parameters, keywords known or at their default)."""
    spec = _LAYERS[layer.call.qualname]
    if len(layer.call.args) > len(spec.positional):
        return False
    defaults = dict(spec.defaults)
    for name, value in layer.call.kwargs.items():
        if name in spec.keywords or name in spec.positional:
            continue
        if name in defaults and isinstance(value, Const) and value.value == defaults[name]:
            continue
        if name in _NONE_ONLY and isinstance(value, Const) and value.value is None:
            continue
        return False
    return True


def _argument(layer: LayerV, name: str) -> Value | None:
    spec = _LAYERS[layer.call.qualname]
    index = spec.positional.index(name) if name in spec.positional else None
    value = layer.call.get(index, name)
    return None if isinstance(value, Const) and value.value is None else value


def _flag(layer: LayerV, name: str, default: bool) -> bool | None:
    value = _argument(layer, name)
    if value is None:
        return default
    return value.value if isinstance(value, Const) and isinstance(value.value, bool) else None


def _dtype(layer: LayerV) -> DType | None | Unreadable:
    return dtype_argument(_argument(layer, "dtype"), layer.call.library.environment.x64)


def _param(layer: LayerV, name: str, x: TypedArray) -> TypedArray | None:
    """The type of the parameter `name` when the layer was created: its layout on the mesh its
    annotation gives, or replicated when a plain initializer made it without one."""
    from shardls.analysis.recognizers.nnx import layer_params, param_placement

    found = next((p for p in layer_params(layer.call) if p.name == name), None)
    if found is None or found.shape is None:
        return None
    dims = [as_int(d) for d in found.shape]
    shape = tuple(d for d in dims if d is not None)
    if len(shape) != len(dims) or min(shape, default=0) < 0:
        return None
    if found.dtype is None and _argument(layer, "param_dtype") is not None:
        return None
    dtype = found.dtype or FLOAT32
    where = f"{layer.kind}.{name} at line {layer.call.frame.line_of(layer.call.node) + 1}"
    if found.annotation is None:
        if not _plain(layer, name):
            return None
        return TypedArray(ShardedType(shape, dtype, x.type.mesh, ((),) * len(shape)), x.mesh)
    placement = param_placement(found.annotation, layer.context)
    if placement is None or not has_explicit_axis(placement.mesh.mesh):
        return None
    usage = UsageContext.RESHARD if found.annotation.created_sharded else UsageContext.PARAM
    outcome = placed(placement.mesh.mesh, placement.spec, shape, dtype, usage)
    if not isinstance(outcome, ShardedType) or outcome.mesh != x.type.mesh:
        return None
    axes = dict.fromkeys(a for dim in outcome.spec for a in dim)
    return TypedArray(outcome, placement.mesh, tuple((a, where) for a in axes), placement.mesh.assumptions)


def _plain(layer: LayerV, name: str) -> bool:
    """A parameter without an annotation is replicated only when what made it is known to add
    none: no initializer given, or a plain one, and metadata without a sharding."""
    initializer = layer.call.kwargs.get(f"{name}_init")
    metadata = layer.call.kwargs.get(f"{name}_metadata")
    plain = initializer is None or (
        isinstance(initializer, Ref) and initializer.qualname.startswith(_INITIALIZERS)
    )
    return plain and (metadata is None or isinstance(metadata, DictV))


def _out_sharding(call: CallArgs) -> PartitionSpec | None | Unreadable:
    if set(call.kwargs) - {"out_sharding", "inputs", "query", "x"}:
        return UNREADABLE
    return spec_argument(call.get(1, "out_sharding"))


def _typed(
    call: CallArgs, operation: str, operands: Sequence[TypedArray | None], rule: Callable[[], ShardedType]
) -> Value | None:
    """The rule applied at the call (its rejection reported there), its operands the input first."""
    known = [o for o in operands if o is not None]
    return apply(call.evaluator, call.frame, call.node, operation, known, rule, None)


def _linear_call(layer: LayerV, call: CallArgs, x: TypedArray) -> Value | None:
    use_bias, dtype, out = _flag(layer, "use_bias", True), _dtype(layer), _out_sharding(call)
    if use_bias is None or dtype is UNREADABLE or out is UNREADABLE:
        return None
    kernel, bias = _kernel_and_bias(layer, x, use_bias)
    if kernel is None:
        return None
    bias_type = bias.type if bias is not None else None
    return _typed(
        call, "Linear", [x, kernel, bias], lambda: linear(x.type, kernel.type, bias_type, dtype, out)
    )


def _linear_general_call(layer: LayerV, call: CallArgs, x: TypedArray) -> Value | None:
    """Without `batch_axis` (not modelled): `axis` an int or a tuple of ints."""
    use_bias, dtype, out = _flag(layer, "use_bias", True), _dtype(layer), _out_sharding(call)
    axis = _ints(_argument(layer, "axis"), (-1,))
    if use_bias is None or dtype is UNREADABLE or out is UNREADABLE or axis is None:
        return None
    kernel, bias = _kernel_and_bias(layer, x, use_bias)
    if kernel is None:
        return None
    bias_type = bias.type if bias is not None else None
    return _typed(
        call,
        "LinearGeneral",
        [x, kernel, bias],
        lambda: linear_general(x.type, kernel.type, bias_type, axis, dtype, out),
    )


def _einsum_call(layer: LayerV, call: CallArgs, x: TypedArray) -> Value | None:
    """The equation of the call, else the constructor's (Flax's `first_from`)."""
    dtype = _dtype(layer)
    out = spec_argument(call.get(2, "out_sharding"))
    given = call.get(1, "einsum_str")
    written = given if given is not None and not _is_none(given) else _argument(layer, "einsum_str")
    equation = as_str(written) if written is not None else None
    if dtype is UNREADABLE or out is UNREADABLE or equation is None or set(call.kwargs) - _EINSUM_CALL:
        return None
    kernel, bias = _kernel_and_bias(layer, x, _argument(layer, "bias_shape") is not None)
    if kernel is None:
        return None
    bias_type = bias.type if bias is not None else None
    text = equation.replace(" ", "")
    return _typed(
        call,
        "Einsum",
        [x, kernel, bias],
        lambda: einsum_layer(x.type, kernel.type, bias_type, text, dtype, out),
    )


_EINSUM_CALL = frozenset({"inputs", "einsum_str", "out_sharding"})


def _kernel_and_bias(
    layer: LayerV, x: TypedArray, use_bias: bool
) -> tuple[TypedArray | None, TypedArray | None]:
    """The kernel and (when used) the bias; no kernel when either is not known."""
    kernel = _param(layer, "kernel", x)
    bias = _param(layer, "bias", x) if use_bias else None
    if use_bias and bias is None:
        return None, None
    return kernel, bias


def _ints(value: Value | None, default: tuple[int, ...]) -> tuple[int, ...] | None:
    """An int or a tuple of ints (`axis=-1`, `axis=(1, 2)`); None when not known."""
    if value is None:
        return default
    single = as_int(value)
    if single is not None:
        return (single,)
    items = [as_int(i) for i in value.items] if isinstance(value, Seq) else [None]
    return tuple(i for i in items if i is not None) if None not in items else None


def _is_none(value: Value) -> bool:
    return isinstance(value, Const) and value.value is None


def _embed_call(layer: LayerV, call: CallArgs, ids: TypedArray) -> Value | None:
    dtype, out = _dtype(layer), _out_sharding(call)
    table = _param(layer, "embedding", ids)
    if dtype is UNREADABLE or out is UNREADABLE or table is None:
        return None
    return _typed(call, "Embed", [ids, table], lambda: embed(ids.type, table.type, dtype, out))


def _attend_call(layer: LayerV, call: CallArgs, query: TypedArray) -> Value | None:
    dtype, out = _dtype(layer), _out_sharding(call)
    table = _param(layer, "embedding", query)
    if dtype is UNREADABLE or out is UNREADABLE or table is None:
        return None
    return _typed(call, "Embed.attend", [query, table], lambda: attend(query.type, table.type, dtype, out))


def _norm_call(layer: LayerV, call: CallArgs, x: TypedArray) -> Value | None:
    use_mean = layer.kind == "LayerNorm"
    use_scale = _flag(layer, "use_scale", True)
    use_bias = _flag(layer, "use_bias", True) if use_mean else False
    dtype = _dtype(layer)
    if use_scale is None or use_bias is None or dtype is UNREADABLE or (set(call.kwargs) - {"x"}):
        return None
    scale = _param(layer, "scale", x) if use_scale else None
    bias = _param(layer, "bias", x) if use_bias else None
    if (use_scale and scale is None) or (use_bias and bias is None):
        return None
    scale_type, bias_type = (scale.type if scale else None), (bias.type if bias else None)
    return _typed(
        call, layer.kind, [x, scale, bias], lambda: normalized(x.type, scale_type, bias_type, dtype, use_mean)
    )


_METHODS: dict[tuple[str, str], Rule] = {
    ("Linear", "__call__"): _linear_call,
    ("LinearGeneral", "__call__"): _linear_general_call,
    ("Einsum", "__call__"): _einsum_call,
    ("Embed", "__call__"): _embed_call,
    ("Embed", "attend"): _attend_call,
    ("LayerNorm", "__call__"): _norm_call,
    ("RMSNorm", "__call__"): _norm_call,
}
METHODS = frozenset(method for _, method in _METHODS)
"""The methods of a layer that have a rule (the library dispatches them here)."""
