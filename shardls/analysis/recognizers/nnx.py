"""Flax NNX layers and variables as sites: one site per annotated parameter.

A parameter's layout is decided when it is created (eager sharding, `flax/core/spmd.py`): its
annotation (`*_init=nnx.with_partitioning(...)`, `*_metadata={'out_sharding': ...}`, or
`nnx.Param(value, out_sharding=...)`) is renamed by the logical axis rules in effect (NNX's dict
semantics, however the rules context is spelled) and laid out on the `mesh=` metadata, else the
`jax.set_mesh` context, or the annotation's own NamedSharding mesh. Explicit-mode initializers
(`partial(init, out_sharding=...)`) create the array sharded without any of that. Layers created
under `nnx.vmap` gain a leading axis (and, with `transform_metadata`, a leading spec entry).

Sites are named after the attribute (`self.up = nnx.Linear(...)` gives `up.kernel`); layers in
a list are `layers[*]` when alike and `layers[0]`, `layers[1]`, ... when their sizes depend on
the loop. Parameters without an annotation get no site: nothing decides their layout.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from shardls.analysis.evaluator import Evaluator, Frame, truthiness
from shardls.analysis.facts import MeshFact, SiteKind, Span
from shardls.analysis.library import CallArgs
from shardls.analysis.library.convert import dtype_of, shape_of, spec_of
from shardls.analysis.library.nnx import (
    ShardedInitializerV,
    StackV,
    VmapV,
    is_none,
    stacked_context,
    with_spans,
)
from shardls.analysis.logical import Rules, Translation, nnx_translate, read_rules
from shardls.analysis.recognizers.wrapped import Application, call_sites
from shardls.analysis.scopes import FunctionInfo
from shardls.analysis.sharded.nnx_vmapped import NNX_VMAP_API, Vmap, body_locals, decorator_vmap, of_nnx
from shardls.analysis.sites import SiteBuilder, recognizes
from shardls.analysis.values import (
    ArrayV,
    Const,
    DictV,
    FunctionV,
    InitializerV,
    MeshV,
    Seq,
    ShardingV,
    SpecV,
    Unknown,
    Value,
    options,
)
from shardls.analysis.walker import (
    UNKNOWN_CALLER,
    Context,
    MeshContext,
    Visit,
    Walker,
    body_contexts,
    first_arguments,
    target_name,
)
from shardls.core import (
    FLOAT32,
    AxisType,
    DType,
    MeshConstructor,
    PartitionSpec,
    Problem,
    Severity,
    UsageContext,
)
from shardls.core.spec import SpecEntry

MAX_UNROLLED = 16
"""Layers of one comprehension given their own sites when their shapes depend on the loop."""
MAX_SPEC_OPTIONS = 4
"""Alternative annotations (`spec_a if flag else spec_b`) shown as separate sites."""
_DEPRECATED_KEYS = ("sharding", "sharding_names")
"""Flax remaps these to `out_sharding` (in this order, so the last one wins) with a warning."""

# -- the layers: one shape formula each ---------------------------------------------------------


@dataclass(frozen=True)
class ParamDecl:
    """A parameter a layer creates, and the keywords that annotate it (the first one given wins,
    as `out_kernel_init or kernel_init` does in MultiHeadAttention)."""

    name: str
    shape: tuple[Value, ...] | None
    init: tuple[str, ...]
    metadata: tuple[str, ...]


def _param(name: str, shape: tuple[Value, ...] | None, prefix: str = "") -> ParamDecl:
    """`kernel` is annotated by `kernel_init`/`kernel_metadata`, `scale` by `scale_*`, and so on."""
    return ParamDecl(prefix + name, shape, (f"{name}_init",), (f"{name}_metadata",))


@dataclass(frozen=True)
class LayerArgs:
    """A layer constructor's arguments by Flax's parameter names."""

    call: CallArgs
    positional: tuple[str, ...]

    def given(self, name: str) -> Value | None:
        """The argument, positional or keyword; None when absent or given as None."""
        index = self.positional.index(name) if name in self.positional else None
        value = self.call.get(index, name)
        return None if value is None or is_none(value) else value

    def get(self, name: str, default: Value | None = None) -> Value:
        """The argument, else `default`, else a symbol named after the parameter."""
        value = self.given(name) or default
        return value if value is not None else Unknown(f"{name} not given", symbol=name)

    def flag(self, name: str, default: bool) -> bool:
        """A boolean argument; an unknown one counts as True (the parameter may exist)."""
        if name not in self.call.kwargs:
            return default
        return truthiness(self.call.kwargs[name]) is not False

    def dims(self, name: str) -> tuple[Value, ...] | None:
        """An int or a sequence of ints (`kernel_size=3` is 1-D); None when its length is unknown."""
        return shape_of(self.get(name))

    def floordiv(self, left: Value, right: Value) -> Value:
        return self.call.evaluator.binop(ast.FloorDiv, left, right, self.call.node, self.call.frame)


def _biased(
    args: LayerArgs, params: list[ParamDecl], bias: tuple[Value, ...] | None, prefix: str = ""
) -> list[ParamDecl]:
    return params + [_param("bias", bias, prefix)] if args.flag("use_bias", True) else params


def _concat(*parts: tuple[Value, ...] | None) -> tuple[Value, ...] | None:
    if any(part is None for part in parts):
        return None
    return tuple(dim for part in parts if part is not None for dim in part)


def _linear(a: LayerArgs) -> list[ParamDecl]:
    out = a.get("out_features")
    return _biased(a, [_param("kernel", (a.get("in_features"), out))], (out,))


def _embed(a: LayerArgs) -> list[ParamDecl]:
    return [_param("embedding", (a.get("num_embeddings"), a.get("features")))]


def _conv(a: LayerArgs) -> list[ParamDecl]:
    groups = a.get("feature_group_count", Const(1))
    features = (a.floordiv(a.get("in_features"), groups), a.get("out_features"))
    return _biased(a, [_param("kernel", _concat(a.dims("kernel_size"), features))], (a.get("out_features"),))


def _conv_transpose(a: LayerArgs) -> list[ParamDecl]:
    features = (a.get("in_features"), a.get("out_features"))
    if a.flag("transpose_kernel", False):
        features = features[::-1]
    return _biased(a, [_param("kernel", _concat(a.dims("kernel_size"), features))], (a.get("out_features"),))


def _linear_general(a: LayerArgs) -> list[ParamDecl]:
    batch_axis = a.get("batch_axis", DictV((), ()))
    batch = batch_axis.values if isinstance(batch_axis, DictV) else None
    out = a.dims("out_features")
    return _biased(a, [_param("kernel", _concat(batch, a.dims("in_features"), out))], _concat(batch, out))


def _einsum(a: LayerArgs) -> list[ParamDecl]:
    kernel = [_param("kernel", a.dims("kernel_shape"))]
    return kernel + [_param("bias", a.dims("bias_shape"))] if a.given("bias_shape") is not None else kernel


def _norm(a: LayerArgs, has_bias: bool = True) -> list[ParamDecl]:
    features = (a.get("num_features"),)
    scale = [_param("scale", features)] if a.flag("use_scale", True) else []
    return scale + [_param("bias", features)] if has_bias and a.flag("use_bias", True) else scale


def _rms_norm(a: LayerArgs) -> list[ParamDecl]:
    return _norm(a, has_bias=False)


def _attention(a: LayerArgs) -> list[ParamDecl]:
    """q/k/v are LinearGeneral (in, heads, head_dim); `out` maps (heads, head_dim) to out_features
    and shares `kernel_*`/`bias_*` unless `out_kernel_*`/`out_bias_*` are given (reference §4.4)."""
    heads, features = a.get("num_heads"), a.get("in_features")
    kv_heads, kv_features = a.get("num_kv_heads", heads), a.get("in_kv_features", features)
    head_dim = a.floordiv(a.get("qkv_features", features), heads)
    params: list[ParamDecl] = []
    projections = (
        ("query", features, heads),
        ("key", kv_features, kv_heads),
        ("value", kv_features, kv_heads),
    )
    for name, source, count in projections:
        kernel = _param("kernel", (source, count, head_dim), f"{name}.")
        params += _biased(a, [kernel], (count, head_dim), f"{name}.")
    if a.flag("normalize_qk", False):
        params += [
            ParamDecl(f"{n}_ln.scale", (head_dim,), (), (f"{n}_ln_scale_metadata",)) for n in ("query", "key")
        ]
    out = a.get("out_features", features)
    params.append(
        ParamDecl(
            "out.kernel",
            (heads, head_dim, out),
            ("out_kernel_init", "kernel_init"),
            ("out_kernel_metadata", "kernel_metadata"),
        )
    )
    if a.flag("use_bias", True):
        params.append(
            ParamDecl(
                "out.bias", (out,), ("out_bias_init", "bias_init"), ("out_bias_metadata", "bias_metadata")
            )
        )
    return params


@dataclass(frozen=True)
class Layer:
    positional: tuple[str, ...]
    """The constructor's positional parameters, in order."""
    params: Callable[[LayerArgs], list[ParamDecl]]


_FEATURES = ("in_features", "out_features")
_LAYERS: dict[str, Layer] = {
    "Linear": Layer(_FEATURES, _linear),
    "Embed": Layer(("num_embeddings", "features"), _embed),
    "Conv": Layer((*_FEATURES, "kernel_size", "strides"), _conv),
    "ConvTranspose": Layer((*_FEATURES, "kernel_size", "strides"), _conv_transpose),
    "LinearGeneral": Layer(_FEATURES, _linear_general),
    "Einsum": Layer(("einsum_str", "kernel_shape", "bias_shape"), _einsum),
    "LayerNorm": Layer(("num_features",), _norm),
    "RMSNorm": Layer(("num_features",), _rms_norm),
    "BatchNorm": Layer(("num_features",), _norm),
    "GroupNorm": Layer(("num_features", "num_groups", "group_size"), _norm),
    "MultiHeadAttention": Layer(
        ("num_heads", "in_features", "qkv_features", "out_features", "num_kv_heads", "in_kv_features"),
        _attention,
    ),
}


# -- annotations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    """One metadata item as Flax receives it, with where its key is written."""

    key: str
    value: Value
    key_span: Span | None = None


@dataclass(frozen=True)
class Annotation:
    """What Flax reads from a variable's metadata when it shards the value at creation."""

    sharding: Value
    mesh: Value | None
    rules: Rules | None
    eager: bool | None
    """`eager_sharding=` of the metadata; None when not written (Flax's setting decides, True
    unless `nnx.use_eager_sharding(False)` is in effect)."""
    source: str
    """The keyword the annotation comes from (`kernel_init`, `bias_metadata`, `out_sharding`)."""
    keyword_span: Span | None
    shared_instead_of: str | None = None
    """For MultiHeadAttention's `out`: the `out_*` keyword that was not given, so the shared
    `kernel_*`/`bias_*` annotation applies."""
    deprecated: tuple[_Entry, ...] = ()
    created_sharded: bool = False
    """JAX's `out_sharding` on the initializer (explicit mode), not Flax metadata: the array is
    created with this layout, and neither Flax's mesh lookup nor logical rules apply."""
    existing: bool = False
    """The parameter wraps an array placed elsewhere (`nnx.Param(jax.device_put(x, s))`): its
    layout is that array's, and the placing site checked it."""


def _annotation(
    entries: list[_Entry], source: str, keyword_span: Span | None, line: int
) -> Annotation | None:
    """Merge metadata as `Variable.__init__` does: later entries win, then the deprecated keys are
    renamed to `out_sharding`; an empty `out_sharding` means no sharding at all."""
    merged = {entry.key: entry for entry in entries}
    for key in _DEPRECATED_KEYS:
        if key in merged:
            merged["out_sharding"] = merged.pop(key)
    out = merged.get("out_sharding")
    if out is None or _is_empty(out.value):
        return None
    eager = merged.get("eager_sharding")
    rules = merged.get("sharding_rules")
    rules_line = rules.key_span.line if rules is not None and rules.key_span is not None else line
    return Annotation(
        out.value,
        merged["mesh"].value if "mesh" in merged else None,
        read_rules(rules.value, f"sharding_rules at line {rules_line + 1}") if rules else None,
        None if eager is None else truthiness(eager.value) is not False,
        source,
        keyword_span,
        deprecated=tuple(e for e in entries if e.key in _DEPRECATED_KEYS),
    )


def _layer_annotation(call: CallArgs, decl: ParamDecl) -> Annotation | None:
    """A layer parameter's annotation: its `*_metadata` dict, then its `*_init` initializer's
    metadata on top (`Variable.__init__` updates the one with the other)."""
    metadata_key, metadata_index = _first_given(call, decl.metadata)
    init_key, init_index = _first_given(call, decl.init)
    entries = _dict_entries(call, metadata_key) if metadata_key else []
    initializer = call.kwargs.get(init_key) if init_key else None
    source, index, keys = metadata_key, metadata_index, decl.metadata
    if isinstance(initializer, ShardedInitializerV):
        return _created_sharded(initializer.out_sharding, init_key or "", call)
    if isinstance(initializer, InitializerV):
        entries += [_Entry("out_sharding", initializer.spec), _Entry("mesh", initializer.mesh or Const(None))]
        entries += (
            [_Entry("sharding_rules", initializer.rules, initializer.span)] if initializer.rules else []
        )
        source, index, keys = init_key, init_index, decl.init
    if source is None:
        return None
    keyword = call.arg_node(None, source)
    span = call.frame.span(keyword) if keyword is not None else None
    found = _annotation(entries, source, span, call.frame.line_of(call.node))
    if found is None or index == 0:
        return found
    return replace(found, shared_instead_of=keys[0])


def _param_annotation(call: CallArgs) -> Annotation | None:
    """`nnx.Param(value, out_sharding=..., mesh=..., sharding_rules=...)` (also `**metadata`)."""
    spans = {k.arg: _name_span(call.frame, k) for k in call.node.keywords if k.arg is not None}
    entries = [_Entry(key, _spanned(call, key, value), spans.get(key)) for key, value in call.kwargs.items()]
    line = call.frame.line_of(call.node)
    keyword = next((k for k in reversed(entries) if k.key in ("out_sharding", *_DEPRECATED_KEYS)), None)
    return _annotation(
        entries, keyword.key if keyword else "out_sharding", keyword.key_span if keyword else None, line
    )


def _created_sharded(sharding: Value, source: str, call: CallArgs, existing: bool = False) -> Annotation:
    keyword = call.arg_node(None, source) if source else None
    span = call.frame.span(keyword) if keyword is not None else None
    return Annotation(
        sharding, None, None, True, source or "out_sharding", span, created_sharded=True, existing=existing
    )


def _first_given(call: CallArgs, keys: tuple[str, ...]) -> tuple[str | None, int]:
    """The first keyword given a truthy value (`out_kernel_init or kernel_init`); an unknown value
    counts as given."""
    for index, key in enumerate(keys):
        value = call.kwargs.get(key)
        if value is not None and truthiness(value) is not False:
            return key, index
    return None, -1


def _dict_entries(call: CallArgs, key: str) -> list[_Entry]:
    """The items of a `*_metadata` dict, with the spans of a literal dict's keys and specs."""
    value = call.kwargs.get(key)
    if not isinstance(value, DictV):
        return []
    node = call.arg_node(None, key)
    literal = isinstance(node, ast.Dict) and len(node.keys) == len(value.keys) and None not in node.keys
    key_nodes: list[ast.expr | None] = list(node.keys) if literal else [None] * len(value.keys)  # type: ignore[union-attr]
    value_nodes: list[ast.expr | None] = list(node.values) if literal else [None] * len(value.keys)  # type: ignore[union-attr]
    entries = []
    for name, item, key_node, value_node in zip(value.keys, value.values, key_nodes, value_nodes):
        if isinstance(name, Const) and isinstance(name.value, str):
            span = _inside_quotes(call.frame.span(key_node), name.value) if key_node is not None else None
            entries.append(
                _Entry(name.value, _with_spans_if_spec(name.value, item, value_node, call.frame), span)
            )
    return entries


def _spanned(call: CallArgs, key: str, value: Value) -> Value:
    return _with_spans_if_spec(key, value, call.arg_node(None, key), call.frame)


def _with_spans_if_spec(key: str, value: Value, node: ast.expr | None, frame: Frame) -> Value:
    return with_spans(value, node, frame) if key in ("out_sharding", *_DEPRECATED_KEYS) else value


def _inside_quotes(span: Span, text: str) -> Span:
    """`"sharding"` -> `sharding`: a rename quick fix replaces the same text as for a keyword."""
    if span.line == span.end_line and span.end_column - span.column == len(text) + 2:
        return Span(span.line, span.column + 1, span.line, span.end_column - 1)
    return span


def _name_span(frame: Frame, keyword: ast.keyword) -> Span:
    """Just the name of `name=value` (what a rename quick fix replaces)."""
    whole = frame.span(keyword)
    return Span(whole.line, whole.column, whole.line, whole.column + len(keyword.arg or ""))


def _is_empty(value: Value) -> bool:
    """Flax shards nothing for a falsy annotation (`None`, `()`, `P()`)."""
    if isinstance(value, SpecV):
        return not value.spec.entries and not value.unknown_entries
    return truthiness(value) is False


# -- sites -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Param:
    """One annotated parameter about to become a site."""

    name: str
    shape: tuple[Value, ...] | None
    dtype: DType
    annotation: Annotation


LAYER_NAMES = frozenset(f"flax.nnx.{name}" for name in _LAYERS)


@dataclass(frozen=True)
class LayerParam:
    """A parameter a layer call creates, as the site builder and the model-memory report read it."""

    name: str
    shape: tuple[Value, ...] | None
    dtype: DType | None
    """`param_dtype` as written; None when not given (Flax then uses float32)."""
    annotation: Annotation | None


def layer_params(call: CallArgs) -> list[LayerParam]:
    """Every parameter of one `flax.nnx.<Layer>(...)` call, annotated or not: the one shape
    formula per layer that sites and whole-model totals share."""
    layer = _LAYERS[call.qualname.rsplit(".", 1)[-1]]
    dtype = dtype_of(call.get(None, "param_dtype"), call.library.environment.x64)
    return [
        LayerParam(decl.name, decl.shape, dtype, _layer_annotation(call, decl))
        for decl in layer.params(LayerArgs(call, layer.positional))
    ]


@dataclass(frozen=True)
class ParamPlacement:
    """Where Flax lays an annotated parameter out when its layer is created: the mesh, and the
    spec after the logical axis rules."""

    mesh: MeshV
    spec: PartitionSpec


def param_placement(annotation: Annotation, context: Context) -> ParamPlacement | None:
    """The layout of a parameter created in `context`, by the same choices as its site (the
    mesh, the rules); None when one of them is not known (an annotation with several values or
    unknown entries, a `mesh=` that cannot be read, rules that cannot be read), when Flax raises (no mesh, meshes that differ,
    rules that contradict each other, a name no rule maps), or when nothing lays the parameter
    out when it is created (`eager_sharding=False`, a layer stacked by `nnx.vmap`/`nnx.scan`)."""
    eager = annotation.eager if annotation.eager is not None else context.eager_sharding is not False
    found = list(spec_options(annotation))
    if not eager or annotation.existing or context.stacked is not None or len(found) != 1:
        return None
    unread_mesh = annotation.mesh is not None and not is_none(annotation.mesh)
    if len(list(options(annotation.sharding))) != 1 or (
        unread_mesh and not isinstance(annotation.mesh, MeshV)
    ):
        return None
    spec, sharding = found[0]
    if annotation.created_sharded:
        own = sharding.mesh if sharding is not None else None
        current = _context_mesh(context)
        mesh = own or (current.mesh if current is not None else None)
        final = spec.spec
    else:
        chosen = chosen_mesh(annotation, sharding, context)
        if chosen is None or mesh_clash(annotation, sharding, context) is not None:
            return None
        mesh = chosen[0]
        translation = translated(spec, annotation, context, mesh.mesh.axis_names)
        if translation.failed or translation.problems or translation.unresolved:
            return None
        final = translation.spec
    if mesh is None or spec.unknown_entries:
        return None
    return ParamPlacement(mesh, final)


@recognizes(*LAYER_NAMES)
def nnx_layer(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    for prefix, instance in _instances(visit, call):
        params = [
            _Param(_joined(prefix, p.name), p.shape, p.dtype or FLOAT32, p.annotation)
            for p in layer_params(instance)
            if p.annotation is not None
        ]
        _add_params(builder, visit, instance, params)


def variable_param(call: CallArgs) -> LayerParam:
    """`nnx.Param(value, ...)`: the value's shape and dtype, and the metadata's annotation (or
    the sharding the value was created with)."""
    value = call.get(0, "value")
    array = value if isinstance(value, ArrayV) else ArrayV(() if isinstance(value, Const) else None)
    annotation = _param_annotation(call)
    if annotation is None and array.sharding is not None:
        annotation = _created_sharded(array.sharding, "", call, existing=array.placed)
    return LayerParam("", array.shape, array.dtype, annotation)


@recognizes("flax.nnx.Param", "flax.nnx.BatchStat", "flax.nnx.Cache")
def nnx_variable(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    variable = variable_param(call)
    if variable.annotation is None:
        return
    prefix, _ = _instances(visit, call)[0]
    dtype = variable.dtype or builder.default_dtype
    _add_params(builder, visit, call, [_Param(prefix or "param", variable.shape, dtype, variable.annotation)])


def _add_params(builder: SiteBuilder, visit: Visit, call: CallArgs, params: list[_Param]) -> None:
    span = call.frame.span(call.node)
    for param in params:
        if param.annotation.eager is None:
            eager = visit.context.eager_sharding is not False
            param = replace(param, annotation=replace(param.annotation, eager=eager))
        for entry in param.annotation.deprecated:
            builder.report(
                entry.key_span or span,
                Problem(
                    "SH204",
                    Severity.WARNING,
                    f"'{entry.key}' is deprecated, use 'out_sharding' instead "
                    "(Flax renames it with a DeprecationWarning)",
                    {"deprecated": entry.key, "replacement": "out_sharding"},
                ),
            )
        for spec, sharding in spec_options(param.annotation):
            if param.annotation.existing:  # laid out as the array is; its checks were made before
                own = sharding if sharding is not None and sharding.mesh is not None else None
                mesh = builder.select_mesh(own, visit, UsageContext.SHARD_SHAPE, spec.span or span)
                _add_param(builder, visit, span, param, spec, mesh, (), UsageContext.SHARD_SHAPE)
            elif param.annotation.created_sharded:
                target = sharding or ShardingV(spec, None, bare=True)
                mesh = builder.select_mesh(target, visit, UsageContext.RESHARD, spec.span or span)
                _add_param(builder, visit, span, param, spec, mesh, (), UsageContext.RESHARD)
            else:
                mesh, notes = _mesh(builder, visit, param.annotation, sharding, span)
                _add_param(builder, visit, span, param, spec, mesh, notes, _flax_usage(visit, mesh))


def _flax_usage(visit: Visit, mesh: MeshFact | None) -> UsageContext:
    """How JAX checks the layout Flax gives a parameter it creates: on an all-Auto mesh Flax
    applies `with_sharding_constraint`, which inside `jit` (`@nnx.jit def create_model`) pads an
    uneven shard instead of rejecting it; otherwise as a parameter created eagerly."""
    auto = mesh is not None and all(t is AxisType.AUTO for t in mesh.mesh.axis_types)
    return UsageContext.WSC if auto and visit.context.inside_jit else UsageContext.PARAM


def _add_param(
    builder: SiteBuilder,
    visit: Visit,
    span: Span,
    param: _Param,
    written: SpecV,
    mesh: MeshFact | None,
    notes: tuple[str, ...],
    usage: UsageContext,
) -> None:
    """One site: stack the shape and spec, rename logical axes (Flax metadata only), report what
    Flax would raise, and lay the result out."""
    annotation = param.annotation
    shape, spec, stack_notes = _stacked(builder, visit, span, param, written)
    translation = translated(
        spec, annotation, visit.context, mesh.mesh.axis_names if mesh is not None else None
    )
    for index, problem in translation.problems:
        builder.report(_entry_span(spec, index, annotation, span), problem, site_name=param.name)
    if translation.failed:
        mesh, notes = None, (*notes, "no layout: Flax raises ValueError for the inconsistent rules")
    final = replace(
        spec,
        spec=translation.spec,
        unknown_entries=tuple(sorted({*spec.unknown_entries, *translation.unresolved})),
    )
    rank_problem = _shared_rank_problem(param, final, shape)
    if rank_problem is not None:
        builder.report(annotation.keyword_span or span, rank_problem, site_name=param.name)
    builder.add_layout(
        SiteKind.PARAM,
        visit,
        span,
        param.name,
        final,
        shape,
        param.dtype,
        usage,
        mesh,
        logical_spec=_renamed(translation.logical, final.spec),
        rule_chain=translation.chain,
        assumptions=(*notes, *stack_notes),
        spec_span=written.span or annotation.keyword_span,
        superseded=lambda p: (
            annotation.existing
            or not annotation.eager  # metadata only: nothing is laid out here, JAX checks nothing
            or (p.code == "SH005" and p.data.get("axis") in translation.unmapped)
            or (p.code == "SH002" and rank_problem is not None)
        ),
    )


def translated(
    spec: SpecV, annotation: Annotation, context: Context, mesh_axes: tuple[str, ...] | None
) -> Translation:
    """The annotation's spec renamed by the logical axis rules in effect (Flax metadata only: an
    array created sharded by JAX is not renamed)."""
    flax_rules = context.rules and not annotation.created_sharded
    rules = context.rules[-1] if flax_rules else None
    return nnx_translate(
        spec.spec, read_rules(rules.rules, rules.how) if rules else None, annotation.rules, mesh_axes
    )


def _renamed(logical: PartitionSpec | None, spec: PartitionSpec) -> PartitionSpec | None:
    """The spec as written, when the rules changed it (what a hover shows next to the result)."""
    return logical if logical is not None and logical.entries != spec.entries else None


def spec_options(annotation: Annotation) -> Iterator[tuple[SpecV, ShardingV | None]]:
    """The spec of each possible annotation (a tuple of names, a P, or a NamedSharding)."""
    for option in list(options(annotation.sharding))[:MAX_SPEC_OPTIONS]:
        spec = spec_of(option)
        if spec is not None:
            yield spec, option if isinstance(option, ShardingV) else None


def _entry_span(spec: SpecV, index: int | None, annotation: Annotation, span: Span) -> Span:
    if index is not None and index < len(spec.entry_spans):
        entry = spec.entry_spans[index]
        if entry is not None:
            return entry
    return spec.span or annotation.keyword_span or span


def _joined(*parts: str) -> str:
    return ".".join(part for part in parts if part)


# -- the mesh (reference §4.2) -------------------------------------------------------------------


def _mesh(
    builder: SiteBuilder, visit: Visit, annotation: Annotation, sharding: ShardingV | None, span: Span
) -> tuple[MeshFact | None, tuple[str, ...]]:
    """`mesh=` metadata, else the `jax.set_mesh`/`use_abstract_mesh` context; a NamedSharding
    annotation's own mesh replaces it, after Flax asserts the two are equal (SH212). With no mesh
    at all Flax raises (SH201)."""
    chosen = chosen_mesh(annotation, sharding, visit.context)
    if chosen is not None:
        mesh, why = chosen
        clash = mesh_clash(annotation, sharding, visit.context)
        if clash is not None:
            builder.report(span, clash)
        return _chosen(builder.mesh_fact(mesh), why), ()
    fallback = builder.fallback_for(span)
    shown = f"; shown on {fallback.source} ({fallback.selection})" if fallback is not None else ""
    if annotation.mesh is not None and not is_none(annotation.mesh):
        return fallback, (f"the mesh= metadata could not be resolved{shown}",)
    if not annotation.eager:
        return fallback, (f"eager_sharding=False: not sharded when created{shown}",)
    if visit.context.unknown_caller:
        return fallback, (f"no mesh in scope here, and no call of this code in the file{shown}",)
    legacy = f" (the deprecated {visit.context.mesh.how} does not count)" if visit.context.mesh else ""
    builder.report(
        span,
        Problem(
            "SH201",
            Severity.ERROR,
            "An auto mesh context or metadata is required if creating a variable with annotation "
            f"out_sharding=...: Flax shards NNX parameters when they are created and finds no mesh "
            f"here{legacy}; create the model under `with jax.set_mesh(mesh):` or pass mesh= to "
            "nnx.with_partitioning",
            {},
        ),
    )
    return fallback, (f"no mesh in scope, so Flax raises{shown}",)


def chosen_mesh(
    annotation: Annotation, sharding: ShardingV | None, context: Context
) -> tuple[MeshV, str] | None:
    """The mesh Flax lays an annotated parameter out on, and why: a NamedSharding annotation's
    own, else the `mesh=` metadata, else the `jax.set_mesh`/`use_abstract_mesh` context's (never
    the deprecated `with mesh:`); None when there is none."""
    metadata = annotation.mesh if isinstance(annotation.mesh, MeshV) else None
    current = _context_mesh(context)
    if sharding is not None and sharding.mesh is not None:
        return sharding.mesh, "the mesh of the NamedSharding annotation"
    if metadata is not None:
        return metadata, "the mesh= metadata"
    if current is not None:
        return current.mesh, current.how
    return None


def _context_mesh(context: Context) -> MeshContext | None:
    return context.mesh if context.mesh is not None and not context.mesh.legacy else None


def mesh_clash(annotation: Annotation, sharding: ShardingV | None, context: Context) -> Problem | None:
    """`shard_value` asserts `mesh == out_sharding.mesh` for a NamedSharding annotation. The
    context's mesh is the abstract mesh, which never equals a concrete Mesh, so a NamedSharding
    on a concrete mesh fails under `jax.set_mesh` (reference: flax/core/spmd.py)."""
    own = sharding.mesh if sharding is not None else None
    metadata = annotation.mesh if isinstance(annotation.mesh, MeshV) else None
    current = _context_mesh(context)
    if own is None:
        return None
    if metadata is not None:
        clash, other = not _same_axes(own, metadata), "the mesh= metadata"
    elif current is not None:
        concrete = own.mesh.constructor is not MeshConstructor.ABSTRACT_MESH
        clash, other = concrete or not _same_axes(own, current.mesh), f"the context mesh ({current.how})"
    else:
        return None
    if not clash:
        return None
    return Problem(
        "SH212",
        Severity.ERROR,
        f"the NamedSharding annotation's mesh is not {other}, and Flax asserts they are equal "
        "(AssertionError); under `jax.set_mesh` Flax compares with the context's AbstractMesh, "
        "which never equals a concrete Mesh: annotate with a tuple of names or a P instead",
        {},
    )


def _same_axes(one: MeshV, other: MeshV) -> bool:
    a, b = one.mesh, other.mesh
    return (a.axis_names, a.axis_sizes, a.axis_types) == (b.axis_names, b.axis_sizes, b.axis_types)


def _chosen(fact: MeshFact, why: str) -> MeshFact:
    return replace(fact, selection=why)


# -- stacked layers (reference §4.7) -------------------------------------------------------------


def _stacked(
    builder: SiteBuilder, visit: Visit, span: Span, param: _Param, spec: SpecV
) -> tuple[tuple[Value, ...] | None, SpecV, tuple[str, ...]]:
    """Each `nnx.vmap` level (innermost first) inserts its axis into the shape, and into the spec
    only when it has `transform_metadata` (`spmd.add_axis`); without it the spec is one entry
    short and `nnx.get_partition_spec` shards the wrong dimensions (SH208)."""
    stack = visit.context.stacked
    if not isinstance(stack, StackV):
        return param.shape, spec, ()
    shape = param.shape
    notes: list[str] = []
    for level in reversed(stack.levels):
        if shape is not None:
            shape = (*shape[: level.axis], level.size, *shape[level.axis :])
        if level.has_metadata:
            spec = insert_spec_entry(spec, level.axis, level.partition)
            notes.append(
                f"dim {level.axis} stacked by {level.how}; this is the layout nnx.get_partition_spec "
                "gives (inside the vmap Flax creates the value unsharded along it)"
            )
        else:
            notes.append(
                f"dim {level.axis} stacked by {level.how} without transform_metadata: the "
                f"annotation {spec.spec.display()} is one entry short"
            )
            builder.report(level.span or span, _missing_metadata(level.transform), site_name=param.name)
    return shape, spec, tuple(notes)


def _missing_metadata(transform: str) -> Problem:
    return Problem(
        "SH208",
        Severity.ERROR,
        f"{transform} stacks annotated parameters here without "
        "transform_metadata={nnx.PARTITION_NAME: ...}: "
        "their annotations keep the rank of one layer, so nnx.get_partition_spec shards the wrong "
        "dimensions of the stacked values; add transform_metadata={nnx.PARTITION_NAME: None} (or a "
        "mesh/logical axis for the stacked dimension)",
        {},
    )


def insert_spec_entry(spec: SpecV, index: int, entry: Value) -> SpecV:
    """`insert_field` (how `nnx.vmap` with transform_metadata stacks an annotation): pad with None up to `index`, then insert the new entry there."""
    entries = list(spec.spec.entries) + [None] * max(0, index - len(spec.spec.entries))
    spans = list(spec.entry_spans) + [None] * max(0, len(entries) - len(spec.entry_spans))
    converted = spec_of(Seq((entry,)))
    unknown = [i + (i >= index) for i in spec.unknown_entries]
    new: SpecEntry = None
    if converted is None or converted.unknown_entries:
        unknown.append(index)
    else:
        new = converted.spec.entries[0]
    entries.insert(index, new)
    spans.insert(index, None)
    return replace(
        spec,
        spec=PartitionSpec(tuple(entries), spec.spec.unreduced, spec.spec.reduced),
        unknown_entries=tuple(sorted(unknown)),
        entry_spans=tuple(spans),
    )


# -- MultiHeadAttention's shared annotations (reference §8 gotcha 19) ---------------------------


def _shared_rank_problem(param: _Param, spec: SpecV, shape: tuple[Value, ...] | None) -> Problem | None:
    annotation = param.annotation
    if annotation.shared_instead_of is None or shape is None or len(spec.spec.entries) <= len(shape):
        return None
    return Problem(
        "SH207",
        Severity.ERROR,
        f"{annotation.source}'s annotation {spec.spec.display()} also applies to {param.name}, which "
        f"has rank {len(shape)}, because {annotation.shared_instead_of} is not given: "
        f"MultiHeadAttention passes {annotation.source} to its `out` projection too, and Flax "
        f"rejects a spec longer than the rank; pass {annotation.shared_instead_of}= with a "
        f"rank-{len(shape)} annotation",
        {"spec_length": len(spec.spec.entries), "rank": len(shape), "keyword": annotation.shared_instead_of},
    )


# -- names: `self.up = nnx.Linear(...)` is `up`; layers built in a comprehension are `layers[i]` ----


def _instances(visit: Visit, call: CallArgs) -> list[tuple[str, CallArgs]]:
    """The name of each layer this call creates, with its arguments. A call in a comprehension
    creates one layer per item: `layers[*]` when they are all alike, else `layers[0]`, `layers[1]`,
    ... with the arguments of each item (when the items can be listed)."""
    path = _path_to(visit.statement, visit.call) or []
    container = target_name(visit.statement)
    comprehension = next(
        (node for node in reversed(path) if isinstance(node, (ast.ListComp, ast.GeneratorExp))), None
    )
    if comprehension is None:
        literal = _literal_position(path)
        if visit.target is not None or container is None:
            return [(visit.target or "", call)]
        return [(f"{container}[{literal}]" if literal is not None else container, call)]
    prefix = container or ""
    loop_names = {
        n.id for g in comprehension.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)
    }
    if not any(isinstance(n, ast.Name) and n.id in loop_names for n in ast.walk(visit.call)):
        return [(f"{prefix}[*]", call)]
    bindings = _bindings(call, comprehension, sorted(loop_names))
    if bindings is None:
        return [(f"{prefix}[*]", call)]
    return [(f"{prefix}[{i}]", _reevaluated(call, locals_)) for i, locals_ in enumerate(bindings)]


def _bindings(
    call: CallArgs, comprehension: ast.ListComp | ast.GeneratorExp, names: list[str]
) -> list[dict[str, Value]] | None:
    """The loop variables of each item, by evaluating the comprehension's generators (bounded)."""
    names_node = ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load())
    probe = ast.copy_location(ast.ListComp(names_node, comprehension.generators), comprehension)
    items = call.evaluator.evaluate(probe, call.frame)
    if not isinstance(items, Seq) or not 0 < len(items.items) <= MAX_UNROLLED:
        return None
    return [dict(zip(names, item.items)) for item in items.items if isinstance(item, Seq)]


def _reevaluated(call: CallArgs, locals_: dict[str, Value]) -> CallArgs:
    frame = replace(call.frame, locals={**call.frame.locals, **locals_})
    evaluate = call.evaluator.evaluate
    args = [evaluate(a, frame) for a in call.node.args if not isinstance(a, ast.Starred)]
    kwargs = {k.arg: evaluate(k.value, frame) for k in call.node.keywords if k.arg is not None}
    return replace(call, args=args, kwargs=kwargs, frame=frame)


def _path_to(root: ast.AST, target: ast.AST) -> list[ast.AST] | None:
    """The nodes from `root` down to `target` (both included)."""
    if root is target:
        return [root]
    for child in ast.iter_child_nodes(root):
        below = _path_to(child, target)
        if below is not None:
            return [root, *below]
    return None


def _literal_position(path: list[ast.AST]) -> int | None:
    """`[nnx.Linear(...), nnx.Linear(...)]`: the index of the element that holds the call."""
    for parent, child in zip(path, path[1:]):
        if isinstance(parent, (ast.List, ast.Tuple)) and isinstance(child, ast.expr) and child in parent.elts:
            return parent.elts.index(child)
    return None


# -- `nnx.vmap` and `nnx.scan` bodies run stacked ---------------------------------------------------

_STACKING = ("vmap", "scan")
"""The transforms whose function's layers gain a leading axis (reference §4.7; scan stacks the
same way when it creates layers)."""


@body_contexts(rank=1)  # nnx.vmap/nnx.scan stacking
def _vmapped_body(
    walker: Walker, info: FunctionInfo, frame: Frame, context: Context, depth: int
) -> list[tuple[dict[str, Value], Context]]:
    """A function decorated with `nnx.vmap`/`nnx.scan` (or wrapped as `nnx.vmap(f, ...)(args)`)
    runs with its layers stacked: its calls' contexts gain the stacking their arguments imply.
    Under a vmap (`jax.vmap`'s decorators too) its typed array parameters are one element each
    (sharded/nnx_vmapped.py).

    Such functions are often defined inside `__init__` (the flax guide's `create_block`), so the
    enclosing call's arguments they read (`dim`) are passed on as well."""
    found: list[tuple[dict[str, Value], Context]] = []
    vmap = decorator_vmap(walker.evaluator, info, frame)
    if vmap is not None:
        sites = call_sites(walker, _decorated(info, frame, context), depth)
        found += [
            _run(
                walker.evaluator,
                info,
                frame,
                vmap,
                site.args,
                site.kwargs,
                replace(site.visit.context, call_site=site.where),
            )
            for site in sites
        ] or [_run(walker.evaluator, info, frame, vmap, [], {}, UNKNOWN_CALLER)]
    elif any(d.rsplit(".", 1)[-1] in _STACKING for d in info.decorators):
        plain = walker.call_contexts(info, depth) or [({}, UNKNOWN_CALLER)]
        for locals_, caller in plain:
            stacked = stacked_context(walker.evaluator, info, frame, locals_, caller.stacked)
            found.append((locals_, replace(caller, stacked=stacked)))
    for transform in _STACKING:
        if info.name in first_arguments(walker.module, transform):
            found += _wrapped_calls(walker, transform, info, frame, depth)
    closure = {name: value for name, value in frame.locals.items() if name not in info.scope.final}
    return [({**closure, **locals_}, caller) for locals_, caller in found]


def _run(
    evaluator: Evaluator,
    info: FunctionInfo,
    defined: Frame,
    vmap: Vmap | None,
    args: list[Value],
    kwargs: dict[str, Value],
    caller: Context,
    wrapper: Value | None = None,
) -> tuple[dict[str, Value], Context]:
    """The body's parameters and context at one call of the transformed function."""
    locals_ = evaluator.bind_arguments(info, args, kwargs, None, defined)
    stacked = stacked_context(evaluator, info, defined, locals_, caller.stacked, wrapper)
    body = body_locals(evaluator, info, vmap, args, kwargs, locals_) if vmap is not None else locals_
    return body, replace(caller, stacked=stacked)


def _decorated(info: FunctionInfo, defined: Frame, context: Context) -> Application:
    """The vmap decorating `info` as an application, so that its calls are found as those of a
    wrapped function (`call_sites`)."""
    decorator = info.node.decorator_list[0]
    call = (
        decorator
        if isinstance(decorator, ast.Call)
        else ast.copy_location(ast.Call(decorator, [], []), decorator)
    )
    return Application(
        NNX_VMAP_API, Visit(call, defined, context, info.node, None), {}, {}, FunctionV(info), info.node
    )


def _wrapped_calls(
    walker: Walker, transform: str, info: FunctionInfo, defined: Frame, depth: int
) -> Iterator[tuple[dict[str, Value], Context]]:
    evaluator = walker.evaluator
    for visit in walker.calls_named(transform, depth):
        wrapped = visit.call.args[0] if visit.call.args else None
        if not (isinstance(wrapped, ast.Name) and wrapped.id == info.name):
            continue
        wrapper = evaluator.evaluate(visit.call, visit.frame)
        function = evaluator.evaluate(wrapped, visit.frame)
        if not any(getattr(getattr(o, "func", None), "node", None) is info.node for o in options(function)):
            continue
        where = f"nnx.{transform}({info.name}, ...) at line {visit.frame.line_of(visit.call) + 1}"
        vmap = of_nnx(wrapper) if isinstance(wrapper, VmapV) else None
        caller = replace(visit.context, call_site=where)
        for args, kwargs in _arguments(walker, visit, info, depth, vmap is not None):
            yield _run(evaluator, info, defined, vmap, args, kwargs, caller, wrapper)


def _arguments(
    walker: Walker, visit: Visit, info: FunctionInfo, depth: int, vmap: bool
) -> list[tuple[list[Value], dict[str, Value]]]:
    """The arguments the transformed function is called with: at the transform's own call
    (`nnx.scan(f, ...)(x)`), or for an `nnx.vmap` wherever its result is called, as for
    `jax.vmap` (`nnx.vmap(f)(x)`, `g(x)` after `g = nnx.vmap(f)`, `jax.jit(nnx.vmap(f))(x)`);
    no argument when none is visible (the layers it creates are still stacked)."""
    if vmap:
        application = Application(NNX_VMAP_API, visit, {}, {}, FunctionV(info), None)
        found = [(site.args, site.kwargs) for site in call_sites(walker, application, depth)]
        return found or [([], {})]
    outer = next(
        (n for n in ast.walk(visit.statement) if isinstance(n, ast.Call) and n.func is visit.call), None
    )
    return [walker.evaluator.call_arguments(outer, visit.frame) if outer is not None else ([], {})]
