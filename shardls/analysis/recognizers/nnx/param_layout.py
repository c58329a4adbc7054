"""Where Flax lays an annotated parameter out when it creates it: the spec of each possible
annotation, the mesh it picks (and the clash it asserts against), and the spec after the logical
axis rules. The sites report what these choices reject; `param_placement` gives the layout the
typed layers (`sharded/layers.py`) carry on, by the same choices.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from shardls.analysis.library.convert import spec_of
from shardls.analysis.library.nnx import is_none
from shardls.analysis.logical import Translation, nnx_translate, read_rules
from shardls.analysis.recognizers.nnx.annotations import Annotation
from shardls.analysis.values import MeshV, ShardingV, SpecV, options
from shardls.analysis.walker import Context, MeshContext
from shardls.core import MeshConstructor, PartitionSpec, Problem, Severity

MAX_SPEC_OPTIONS = 4
"""Alternative annotations (`spec_a if flag else spec_b`) shown as separate sites."""


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


def spec_options(annotation: Annotation) -> Iterator[tuple[SpecV, ShardingV | None]]:
    """The spec of each possible annotation (a tuple of names, a P, or a NamedSharding)."""
    for option in list(options(annotation.sharding))[:MAX_SPEC_OPTIONS]:
        spec = spec_of(option)
        if spec is not None:
            yield spec, option if isinstance(option, ShardingV) else None


# -- the mesh (reference §4.2) -------------------------------------------------------------------


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
