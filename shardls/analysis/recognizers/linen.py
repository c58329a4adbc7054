"""Flax Linen parameters as sites: `nn.Dense/DenseGeneral/Embed/LayerNorm/RMSNorm/Conv` with a
partitioned `*_init`, and `self.param(name, nn.with_(logical_)partitioning(...), shape)`.

Linen only records axis names on a parameter (`flax/core/meta.py`); the layout is made where the
variables are laid out on a mesh: `jax.jit(init, out_shardings=nn.get_sharding(...))`, or the
sharding constraint `unbox` applies under a mesh. A site shows that layout on the mesh that
applies (the `mesh=` of the annotation, the mesh in effect, else one shardls picks to show a
layout), with logical names renamed by Linen's rules (in order; a name no rule takes shards
nothing). Because the parameter is not placed here, what JAX would reject is at most a warning
saying so; the placement (`jit`, `device_put`) is where an error belongs.

A module method runs with `self` the module built where the class is called (`MLP(4, 1024)`),
and `__call__` with the input of `Module(...)(x)` or `model.init(key, x)`/`model.apply(v, x)`;
a layer's input dimension that is not known is a named size, never a guess.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, replace

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.facts import MeshFact, SiteKind, Span
from shardls.analysis.library import CallArgs
from shardls.analysis.library.convert import dtype_of, shape_of, spec_of
from shardls.analysis.library.linen import PARAM, PartitionedInitV, applying, param_array
from shardls.analysis.library.linen_lifted import LinenStackV
from shardls.analysis.logical import Translation, linen_translate, read_rules
from shardls.analysis.recognizers.nnx.layers import LayerArgs, ParamDecl
from shardls.analysis.recognizers.nnx.stacking import insert_spec_entry
from shardls.analysis.sites import SiteBuilder, recognizes
from shardls.analysis.values import ArrayV, Const, MeshV, SpecV, Unknown, Value
from shardls.analysis.walker import Context, Visit
from shardls.core import FLOAT32, DType, PartitionSpec, UsageContext

NOT_PLACED = (
    "Linen only records these axis names; this is the layout JAX gives the parameter where the "
    "variables are placed on this mesh (nn.get_sharding, jit out_shardings)"
)
"""Why a problem at a Linen parameter is a warning: the parameter is not placed where it is made."""
UNSEEN_APPLICATION = "the module is applied outside jit (where it is applied is not visible here)"
CONSTRAINED = "mesh= given: Linen constrains the value to this layout when self.param unboxes it"

# -- the layers: one shape formula each (checked with `jax.eval_shape(model.init, ...)`) --------


@dataclass(frozen=True)
class _Input:
    """What a layer is applied to (`nn.Dense(8)(x)`): its shape when known."""

    shape: tuple[Value, ...] | None

    def dim(self, axis: int, symbol: str) -> Value:
        """One dimension of the input, else a size named `symbol`."""
        if self.shape is not None and -len(self.shape) <= axis < len(self.shape):
            return self.shape[axis]
        return Unknown("the layer's input shape is not known here", symbol=symbol)


def _decl(name: str, shape: tuple[Value, ...] | None) -> ParamDecl:
    return ParamDecl(name, shape, (f"{name}_init",), ())


def _biased(a: LayerArgs, kernel: ParamDecl, bias: tuple[Value, ...] | None) -> list[ParamDecl]:
    return [kernel, _decl("bias", bias)] if a.flag("use_bias", True) else [kernel]


def _dense(a: LayerArgs, x: _Input) -> list[ParamDecl]:
    features = a.get("features")
    return _biased(a, _decl("kernel", (x.dim(-1, "in_features"), features)), (features,))


def _dense_general(a: LayerArgs, x: _Input) -> list[ParamDecl]:
    """`kernel` is the input's dimensions at `axis` followed by `features`; with `batch_dims`
    the layout is not modelled (its shape is left unknown)."""
    features, axes = a.dims("features"), a.dims("axis") or (Const(-1),)
    batch = a.given("batch_dims")
    indices = [
        axis.value if isinstance(axis, Const) and isinstance(axis.value, int) else None for axis in axes
    ]
    if features is None or (batch is not None and shape_of(batch) != ()) or None in indices:
        return _biased(a, _decl("kernel", None), features)
    names = ["in_features"] if len(indices) == 1 else [f"in_features_{i}" for i in range(len(indices))]
    inputs = tuple(x.dim(index, name) for index, name in zip(indices, names) if index is not None)
    return _biased(a, _decl("kernel", (*inputs, *features)), features)


def _embed(a: LayerArgs, x: _Input) -> list[ParamDecl]:
    return [_decl("embedding", (a.get("num_embeddings"), a.get("features")))]


def _norm(a: LayerArgs, x: _Input, has_bias: bool = True) -> list[ParamDecl]:
    """`scale` and `bias` over the input's last dimension (`feature_axes=-1`; other feature axes
    are not modelled)."""
    features = (x.dim(-1, "features"),) if a.given("feature_axes") is None else None
    scale = [_decl("scale", features)] if a.flag("use_scale", True) else []
    return scale + [_decl("bias", features)] if has_bias and a.flag("use_bias", True) else scale


def _rms_norm(a: LayerArgs, x: _Input) -> list[ParamDecl]:
    return _norm(a, x, has_bias=False)


def _conv(a: LayerArgs, x: _Input) -> list[ParamDecl]:
    groups = a.get("feature_group_count", Const(1))
    window = a.dims("kernel_size")
    features = a.get("features")
    kernel = None if window is None else (*window, a.floordiv(x.dim(-1, "in_features"), groups), features)
    return _biased(a, _decl("kernel", kernel), (features,))


@dataclass(frozen=True)
class _Layer:
    positional: tuple[str, ...]
    params: Callable[[LayerArgs, _Input], list[ParamDecl]]


_LAYERS: dict[str, _Layer] = {
    "Dense": _Layer(("features",), _dense),
    "DenseGeneral": _Layer(("features", "axis", "batch_dims"), _dense_general),
    "Embed": _Layer(("num_embeddings", "features"), _embed),
    "LayerNorm": _Layer(("epsilon",), _norm),
    "RMSNorm": _Layer(("epsilon",), _rms_norm),
    "Conv": _Layer(("features", "kernel_size", "strides"), _conv),
}


# -- sites -------------------------------------------------------------------------------------


LAYER_NAMES = frozenset(f"flax.linen.{name}" for name in _LAYERS)


@dataclass(frozen=True)
class LinenParam:
    """A parameter a Linen layer creates: what its site and the variables tree both read."""

    name: str
    shape: tuple[Value, ...] | None
    dtype: DType
    init: Value | None
    """The `*_init` argument (a `PartitionedInitV` when annotated); None when not given."""


def layer_params(call: CallArgs, input_shape: tuple[Value, ...] | None) -> list[LinenParam]:
    """Every parameter of one `flax.linen.<Layer>(...)` applied to an input of `input_shape`."""
    layer = _LAYERS[call.qualname.rsplit(".", 1)[-1]]
    dtype = dtype_of(call.get(None, "param_dtype"), call.library.environment.x64) or FLOAT32
    decls = layer.params(LayerArgs(call, layer.positional), _Input(input_shape))
    return [LinenParam(d.name, d.shape, dtype, call.kwargs.get(d.init[0])) for d in decls]


@recognizes(*LAYER_NAMES)
def linen_layer(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    prefix = _layer_name(visit, call)
    for param in layer_params(call, _input_shape(visit, call)):
        if isinstance(param.init, PartitionedInitV):
            _add_param(builder, visit, call, f"{prefix}.{param.name}", param.shape, param.dtype, param.init)


@recognizes(PARAM)
def linen_param(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    """`self.param(name, init, shape, dtype)`."""
    init = call.get(1, "init_fn")
    if not isinstance(init, PartitionedInitV):
        return
    name = call.get(0, "name")
    label = name.value if isinstance(name, Const) and isinstance(name.value, str) else "param"
    array = param_array(call)
    _add_param(builder, visit, call, label, array.shape, array.dtype or FLOAT32, init)


def _add_param(
    builder: SiteBuilder,
    visit: Visit,
    call: CallArgs,
    name: str,
    shape: tuple[Value, ...] | None,
    dtype: DType,
    init: PartitionedInitV,
) -> None:
    span = call.frame.span(call.node)
    named = spec_of(init.names)
    if named is None:
        return
    shape, written, stack_notes, laid_out = _stacked(visit.context.stacked, shape, named)
    translation = _translation(written.spec, init, visit.context, call)
    unknown = tuple(sorted({*written.unknown_entries, *translation.unresolved}))
    final = replace(written, spec=translation.spec, unknown_entries=unknown)
    mesh = _mesh(builder, visit, init, span) if laid_out and not translation.unresolved else None
    constrained = isinstance(init.mesh, MeshV)
    builder.add_layout(
        SiteKind.PARAM,
        visit,
        span,
        name,
        final,
        shape,
        dtype,
        _usage(init, visit.context),
        mesh,
        logical_spec=translation.logical if translation.logical != translation.spec else None,
        rule_chain=translation.chain,
        assumptions=(CONSTRAINED if constrained else NOT_PLACED, *stack_notes),
        assumed=_assumed(constrained, visit.context),
        spec_span=written.span or init.span,
    )


def _stacked(
    stack: Value | None, shape: tuple[Value, ...] | None, spec: SpecV
) -> tuple[tuple[Value, ...] | None, SpecV, tuple[str, ...], bool]:
    """The shape and names after the lifted transforms around the module (innermost first, as
    Flax's `add_axis` runs), notes saying so, and whether a layout follows (not when Flax raises
    for want of a partition name, nor when the stacked axis is not known)."""
    if not isinstance(stack, LinenStackV):
        return shape, spec, (), True
    notes: list[str] = []
    for level in reversed(stack.levels):
        if level.axis is None:
            return None, spec, (*notes, f"{level.how}: variable_axes not known"), False
        if level.partition is None:
            note = f"{level.how} without metadata_params={{nn.PARTITION_NAME: ...}}: Flax raises PartitioningUnspecifiedError"
            return shape, spec, (*notes, note), False
        if shape is not None:
            shape = (*shape[: level.axis], level.size, *shape[level.axis :])
        spec = insert_spec_entry(spec, level.axis, level.partition)
        notes.append(f"dim {level.axis} stacked by {level.how}")
    return shape, spec, tuple(notes), True


def _assumed(constrained: bool, context: Context) -> tuple[str, ...]:
    """What a problem at the parameter rests on: that the variables are placed on this mesh, or,
    for a value Linen constrains, that the module is applied outside `jit` when where it is
    applied is not visible."""
    if not constrained:
        return (NOT_PLACED,)
    return (UNSEEN_APPLICATION,) if context.unknown_caller and not context.inside_jit else ()


def _usage(init: PartitionedInitV, context: Context) -> UsageContext:
    """How JAX checks the layout: with `mesh=` on the annotation Linen constrains the value when
    `self.param` unboxes it, which inside `jit` pads an uneven shard and outside rejects it;
    otherwise as the `out_shardings` of the `jit` that places the variables."""
    if not isinstance(init.mesh, MeshV):
        return UsageContext.JIT
    return UsageContext.WSC if context.inside_jit else UsageContext.WSC_EAGER


def _translation(
    spec: PartitionSpec, init: PartitionedInitV, context: Context, call: CallArgs
) -> Translation:
    """Logical names renamed by the annotation's own rules, else the `nn.logical_axis_rules`
    context's (Linen's in-order semantics); with neither, the mesh axes are decided where rules
    are applied later (`nn.logical_to_mesh_sharding`), so the named entries stay unknown."""
    if not init.logical:
        return Translation(spec, None)
    line = call.frame.line_of(call.node) + 1
    rules = read_rules(init.rules, f"rules= at line {line}") if init.rules is not None else None
    if rules is None and context.rules:
        rules = read_rules(context.rules[-1].rules, context.rules[-1].how)
    if rules is None:
        named = tuple(i for i, entry in enumerate(spec.entries) if entry is not None)
        chain = ("no logical axis rules in effect here: the mesh axes are decided where rules are applied",)
        return Translation(spec, spec, chain, unresolved=named)
    return linen_translate(spec, rules)


def _mesh(builder: SiteBuilder, visit: Visit, init: PartitionedInitV, span: Span) -> MeshFact | None:
    """The annotation's `mesh=`, else the mesh in effect (Linen reads the legacy `with mesh:`
    too), else a mesh shardls picks to show the layout (which decides nothing)."""
    if isinstance(init.mesh, MeshV):
        return replace(builder.mesh_fact(init.mesh), selection="the mesh= of the annotation")
    current = visit.context.mesh
    if current is not None:
        return replace(builder.mesh_fact(current.mesh), selection=current.how)
    return builder.fallback_for(span)


# -- names and inputs ----------------------------------------------------------------------------


def _layer_name(visit: Visit, call: CallArgs) -> str:
    """The name Flax gives the layer: `name=`, the attribute it is assigned to in `setup`, else
    `Dense_0`, `Dense_1`, ... in the order the method creates layers of that class."""
    given = call.get(None, "name")
    if isinstance(given, Const) and isinstance(given.value, str):
        return given.value
    function = visit.frame.scope.function
    if function is not None and function.name == "setup" and visit.target:
        return visit.target
    cls = call.qualname.rsplit(".", 1)[-1]
    if function is None:
        return f"{cls}_0"
    same = [
        node
        for node in ast.walk(function.node)
        if isinstance(node, ast.Call) and _final_name(node.func) == cls
    ]
    same.sort(key=lambda node: (node.lineno, node.col_offset))
    return f"{cls}_{same.index(visit.call) if visit.call in same else 0}"


def _final_name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _input_shape(visit: Visit, call: CallArgs) -> tuple[Value, ...] | None:
    return applied_shape(call.evaluator, visit.statement, visit.call, visit.frame)


def applied_shape(
    evaluator: Evaluator, statement: ast.stmt, built: ast.Call, frame: Frame
) -> tuple[Value, ...] | None:
    """The shape of what a layer is applied to in the same statement (`nn.Dense(8)(x)`)."""
    applied = applying(statement, built)
    if applied is None or not applied.args or isinstance(applied.args[0], ast.Starred):
        return None
    value = evaluator.evaluate(applied.args[0], frame)
    return value.shape if isinstance(value, ArrayV) else None
