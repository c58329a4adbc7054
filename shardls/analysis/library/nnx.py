"""Flax NNX and Linen: annotated initializers (layers and parameters come with the NNX work)."""

from __future__ import annotations

from shardls.analysis.library import CallArgs
from shardls.analysis.library.registry import calls
from shardls.analysis.values import InitializerV, Value


@calls("flax.nnx.with_partitioning", "flax.linen.with_partitioning", "flax.linen.with_logical_partitioning")
def _with_partitioning(call: CallArgs) -> Value | None:
    spec = call.get(1, "sharding", "names")
    if spec is None:
        return None
    return InitializerV(
        spec,
        call.get(2, "mesh"),
        call.get(None, "sharding_rules", "rules"),
        call.frame.span(call.node),
        origin=call.frame.origin("with_partitioning", call.node),
    )
