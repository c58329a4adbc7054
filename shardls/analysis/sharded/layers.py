"""Calls of Flax NNX layers in Explicit mode: `y = layer(x)` typed as Flax 0.12's `__call__`
computes it, one JAX operation after another with the core's rules, so that its result has the
type `jax.typeof` gives and a call JAX rejects is the underlying operation's problem, at the call.

The computations are `layer_rules.py`'s (`nnx.Linear` is `dot_general(x, kernel)` then
`+ bias`, a norm's `scale`/`bias` broadcast into its result, ...); this module reads the layer,
the call and the parameters' types. A parameter's type is its layout when the layer is created,
resolved as its site is (`recognizers/nnx/param_layout.param_placement`); an unannotated one is
created replicated. The context of the creation is that of the statement being analysed, as for
the arrays a placement makes there.

Anything not known (a constructor argument, an initializer, the rules, a stacked layer, an
`eager_sharding=False` parameter, a keyword this module does not model) leaves the result
untyped: never a guess.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from shardls.analysis.sharded.layer_rules import (
    attend,
    einsum_layer,
    embed,
    linear,
    linear_general,
    normalized,
)
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
from shardls.analysis.values import ArrayV, Const, DictV, Ref, Seq, TypedArray, Value, as_int, as_str
from shardls.core import FLOAT32, DType, PartitionSpec, UsageContext
from shardls.core.typing import ShardedType, placed

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


_INIT = frozenset({"dtype", "param_dtype", "rngs"})
_LAYERS: dict[str, _Layer] = {
    _NNX + "Linear": _Layer(
        ("in_features", "out_features"),
        _INIT | {"precision", "use_bias", "kernel_init", "bias_init", "kernel_metadata", "bias_metadata"},
    ),
    _NNX + "LinearGeneral": _Layer(
        ("in_features", "out_features"),
        _INIT
        | {"precision", "axis", "use_bias", "kernel_init", "bias_init", "kernel_metadata", "bias_metadata"},
    ),
    _NNX + "Einsum": _Layer(
        ("einsum_str", "kernel_shape", "bias_shape"),
        _INIT | {"precision", "kernel_init", "bias_init", "kernel_metadata", "bias_metadata"},
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
    """A layer made where types are recorded, with the context it is made in; none when the
    evaluation's mesh is not the context's (a top-level layer evaluated under the mesh set where
    it is written, which its parameters' resolution would not see)."""
    evaluator = call.evaluator
    context = evaluator.context
    if base is not None or evaluator.typing is None or context is None:
        return base
    current = context.mesh.mesh.mesh if context.mesh is not None and not context.mesh.legacy else None
    if current != (evaluator.context_mesh.mesh if evaluator.context_mesh is not None else None):
        return base
    if _before_its_mesh(call, context):
        return base
    return LayerV(call, context)


def _before_its_mesh(call: CallArgs, context: Context) -> bool:
    """A layer made at the top of a module under a mesh that a `jax.set_mesh(mesh)` statement
    sets: made before that statement (or in another module, at its import) Flax finds no mesh
    for its annotated parameters, whatever the statement being analysed sees."""
    mesh = context.mesh
    frame = call.frame
    if mesh is None or not mesh.how.startswith("jax.set_mesh(") or frame.scope is not frame.module.scope:
        return False
    same_file = mesh.mesh.path is not None and mesh.mesh.path == frame.module.path
    return not same_file or frame.line_of(call.node) < mesh.span.line


Rule = Callable[["LayerV", "CallArgs", TypedArray], Value | None]


def layer_call(layer: LayerV, method: str, call: CallArgs) -> Value | None:
    """`layer(x)` or `layer.attend(q)` (method `__call__` or `attend`): the result with its type,
    or None (an unknown value) when something it depends on is not known."""
    found = _METHODS.get((layer.kind, method))
    if found is None or not _readable(layer.call):
        return None
    rule, name = found
    x = typed(call.get(0, name))
    if x is None and (layer.kind, method) == ("Linear", "__call__"):
        return untyped_linear_call(layer.call, call)
    if x is None or len(call.args) > 1 or set(call.kwargs) & (_INPUTS - {name}):
        return None
    return rule(layer, call, x)


_HALF_OR_SINGLE = frozenset({"float16", "bfloat16", "float32"})
"""Input dtypes that Flax's `promote_dtype` with the float32 kernel makes float32."""


def untyped_linear_call(made: CallArgs, call: CallArgs) -> Value | None:
    """`linear(x)` for the `nnx.Linear` made by `made`, where `x` has no sharded type (Auto
    axes, a `shard_map` block, or no typing pass: `library/nnx_state.py`): the shape
    Flax's `dot_general` of `x` with the `(in_features, out_features)` kernel gives,
    `x.shape[:-1] + (out_features,)`, when `x`'s last size is `in_features` (otherwise JAX
    raises: nothing is known). No sharding is given to the result. The dtype is `dtype=`, else
    float32 for a float32 kernel and a float input of at most 32 bits, else unknown."""
    x = call.get(0, "inputs")
    if not isinstance(x, ArrayV) or not x.shape or len(call.args) != 1 or call.kwargs:
        return None
    if made.qualname != _NNX + "Linear" or not _readable(made):
        return None
    in_features, out_features = _given(made, "in_features"), _given(made, "out_features")
    if out_features is None or as_int(out_features) is None:
        return None
    last = as_int(x.shape[-1])
    if last is None or in_features is None or last != as_int(in_features):
        return None
    dtype = dtype_argument(_given(made, "dtype"), made.library.environment.x64)
    if dtype is UNREADABLE:
        return None
    if dtype is None and _given(made, "param_dtype") is None and x.dtype is not None:
        dtype = FLOAT32 if x.dtype.name in _HALF_OR_SINGLE else None
    return ArrayV((*x.shape[:-1], out_features), dtype, None)


def _readable(made: CallArgs) -> bool:
    """The constructor's arguments (`made`) are all modelled (positional ones within the
    positional parameters, keywords known or at their default)."""
    spec = _LAYERS[made.qualname]
    if len(made.args) > len(spec.positional):
        return False
    defaults = dict(spec.defaults)
    for name, value in made.kwargs.items():
        if name in spec.keywords or name in spec.positional:
            continue
        if name in defaults and isinstance(value, Const) and value.value == defaults[name]:
            continue
        if name in _NONE_ONLY and isinstance(value, Const) and value.value is None:
            continue
        return False
    return True


def _given(made: CallArgs, name: str) -> Value | None:
    """The constructor's argument `name`; None when not given or given as None."""
    spec = _LAYERS[made.qualname]
    index = spec.positional.index(name) if name in spec.positional else None
    value = made.get(index, name)
    return None if isinstance(value, Const) and value.value is None else value


def _flag(layer: LayerV, name: str, default: bool) -> bool | None:
    value = _given(layer.call, name)
    if value is None:
        return default
    return value.value if isinstance(value, Const) and isinstance(value.value, bool) else None


def _dtype(layer: LayerV) -> DType | None | Unreadable:
    return dtype_argument(_given(layer.call, "dtype"), layer.call.library.environment.x64)


def _param(layer: LayerV, name: str, x: TypedArray) -> TypedArray | None:
    """The type of the parameter `name` when the layer was created: its layout on the mesh its
    annotation gives, or replicated when a plain initializer made it without one."""
    from shardls.analysis.recognizers.nnx.param_layout import param_placement
    from shardls.analysis.recognizers.nnx.params import layer_params

    found = next((p for p in layer_params(layer.call) if p.name == name), None)
    if found is None or found.shape is None:
        return None
    dims = [as_int(d) for d in found.shape]
    shape = tuple(d for d in dims if d is not None)
    if len(shape) != len(dims) or min(shape, default=0) < 0:
        return None
    if found.dtype is None and _given(layer.call, "param_dtype") is not None:
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
    if set(call.kwargs) - {"out_sharding", *_INPUTS}:
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
    axis = _ints(_given(layer.call, "axis"), (-1,))
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
    written = given if given is not None and not _is_none(given) else _given(layer.call, "einsum_str")
    equation = as_str(written) if written is not None else None
    if dtype is UNREADABLE or out is UNREADABLE or equation is None or set(call.kwargs) - _EINSUM_CALL:
        return None
    kernel, bias = _kernel_and_bias(layer, x, _given(layer.call, "bias_shape") is not None)
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
    return _with_table(layer, call, ids, "Embed", embed)


def _attend_call(layer: LayerV, call: CallArgs, query: TypedArray) -> Value | None:
    return _with_table(layer, call, query, "Embed.attend", attend)


def _with_table(
    layer: LayerV,
    call: CallArgs,
    x: TypedArray,
    name: str,
    rule: Callable[[ShardedType, ShardedType, DType | None, PartitionSpec | None], ShardedType],
) -> Value | None:
    """`Embed.__call__` and `Embed.attend`: the input against the embedding table."""
    dtype, out = _dtype(layer), _out_sharding(call)
    table = _param(layer, "embedding", x)
    if dtype is UNREADABLE or out is UNREADABLE or table is None:
        return None
    return _typed(call, name, [x, table], lambda: rule(x.type, table.type, dtype, out))


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


_METHODS: dict[tuple[str, str], tuple[Rule, str]] = {
    ("Linear", "__call__"): (_linear_call, "inputs"),
    ("LinearGeneral", "__call__"): (_linear_general_call, "inputs"),
    ("Einsum", "__call__"): (_einsum_call, "inputs"),
    ("Embed", "__call__"): (_embed_call, "inputs"),
    ("Embed", "attend"): (_attend_call, "query"),
    ("LayerNorm", "__call__"): (_norm_call, "x"),
    ("RMSNorm", "__call__"): (_norm_call, "x"),
}
"""Each method's rule, and the name of its input parameter."""
_INPUTS = frozenset(name for _, name in _METHODS.values())
METHODS = frozenset(method for _, method in _METHODS)
"""The methods of a layer that have a rule (the library dispatches them here)."""
