"""Mesh constructors become mesh facts (their problems are reported at the constructor)."""

from __future__ import annotations

from shardls.analysis.library import CallArgs
from shardls.analysis.sites import SiteBuilder, recognizes
from shardls.analysis.values import MeshV
from shardls.analysis.walker import Visit

MESH_CONSTRUCTORS = ("jax.make_mesh", "jax.sharding.Mesh", "jax.sharding.AbstractMesh")


@recognizes(*MESH_CONSTRUCTORS)
def mesh_constructor(builder: SiteBuilder, visit: Visit, call: CallArgs) -> None:
    value = call.library.call(call.evaluator, call.qualname, call.args, call.kwargs, call.node, call.frame)
    if isinstance(value, MeshV):
        builder.mesh_fact(value, visit.target)
