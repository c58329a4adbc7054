"""The recognizers of Flax NNX layers (`nnx.Linear(...)`, ...) and variables (`nnx.Param(...)`):
one site per annotated parameter, with what Flax would raise when it creates it (no mesh, meshes
that differ, inconsistent rules, a shared annotation too long for MultiHeadAttention's `out`).

Registered at import (`recognizers.load`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from shardls.analysis.facts import MeshFact, SiteKind, Span
from shardls.analysis.library import CallArgs
from shardls.analysis.library.nnx import is_none
from shardls.analysis.recognizers.nnx.annotations import Annotation
from shardls.analysis.recognizers.nnx.instances import instances
from shardls.analysis.recognizers.nnx.layers import LAYER_NAMES
from shardls.analysis.recognizers.nnx.param_layout import chosen_mesh, mesh_clash, spec_options, translated
from shardls.analysis.recognizers.nnx.params import layer_params, variable_param
from shardls.analysis.recognizers.nnx.stacking import stacked
from shardls.analysis.sites import SiteBuilder, recognizes
from shardls.analysis.values import ShardingV, SpecV, Value
from shardls.analysis.walker import Visit
from shardls.core import FLOAT32, AxisType, DType, PartitionSpec, Problem, Severity, UsageContext


@dataclass(frozen=True)
class _Param:
    """One annotated parameter about to become a site."""

    name: str
    shape: tuple[Value, ...] | None
    dtype: DType
    annotation: Annotation


@recognizes(*LAYER_NAMES)
def nnx_layer(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    for prefix, instance in instances(visit, call):
        params = [
            _Param(_joined(prefix, p.name), p.shape, p.dtype or FLOAT32, p.annotation)
            for p in layer_params(instance)
            if p.annotation is not None
        ]
        _add_params(builder, visit, instance, params)


@recognizes("flax.nnx.Param", "flax.nnx.BatchStat", "flax.nnx.Cache")
def nnx_variable(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    variable = variable_param(call)
    if variable.annotation is None:
        return
    prefix, _ = instances(visit, call)[0]
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
    shape, spec, stack_notes = stacked(builder, visit, span, param.name, param.shape, written)
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


def _renamed(logical: PartitionSpec | None, spec: PartitionSpec) -> PartitionSpec | None:
    """The spec as written, when the rules changed it (what a hover shows next to the result)."""
    return logical if logical is not None and logical.entries != spec.entries else None


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


def _chosen(fact: MeshFact, why: str) -> MeshFact:
    return replace(fact, selection=why)


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
