"""Real shard_map bodies reshape their blocks with collectives (maxtext ulysses_attention.py:
`jax.lax.all_to_all(x, axis, split_axis=1, concat_axis=2, tiled=True)`, deepseek_batchsplit.py:
`all_gather(w, "fsdp", tiled=True, axis=1)`, `psum_scatter(g, "fsdp", tiled=True)`, `pcast`) and
compute with `jnp.repeat`, `jnp.transpose`, `jnp.maximum`, `jnp.tril`. The block sizes follow
from the body's mesh, so each output gets its global shape.
"""

from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("fsdp", "context"), axis_types=(AxisType.Auto, AxisType.Auto))
data_spec = P("fsdp", None, "context", None)


@partial(jax.shard_map, mesh=mesh, in_specs=data_spec, out_specs=P("fsdp", "context", None, None))
def exchange(tensor):
    return jax.lax.all_to_all(tensor, "context", split_axis=1, concat_axis=2, tiled=True)


@partial(
    jax.shard_map, mesh=mesh, in_specs=P("fsdp", "context"), out_specs=P(None, "context"), check_vma=False
)
def gather_rows(weight):
    return jax.lax.all_gather(weight, "fsdp", tiled=True, axis=0)


@partial(jax.shard_map, mesh=mesh, in_specs=P(None, "context"), out_specs=P("fsdp", "context"))
def scatter_rows(grad):
    return jax.lax.psum_scatter(grad, "fsdp", scatter_dimension=0, tiled=True)


@partial(jax.shard_map, mesh=mesh, in_specs=P("fsdp"), out_specs=P(None, "fsdp"), check_vma=False)
def stack_blocks(rows):
    return jax.lax.all_gather(rows, "context", axis=1)


@partial(jax.shard_map, mesh=mesh, in_specs=(data_spec, data_spec), out_specs=data_spec)
def scores(query, key):
    key = jnp.repeat(key, 2, axis=1)
    logits = jnp.einsum("bhqd,bhkd->bhqk", query, key)
    causal = jnp.tril(jnp.ones((logits.shape[-1], logits.shape[-1]), dtype=bool))
    weights = jnp.where(causal, logits, -1e30)
    weights = weights / jnp.maximum(jnp.sum(weights, axis=-1, keepdims=True), 1e-30)
    return jnp.transpose(jnp.einsum("bhqk,bhkd->bqhd", weights, key), (0, 2, 1, 3))


exchanged = exchange(jnp.ones((2, 8, 16, 4)))  # expect: exchanged
gathered = gather_rows(jnp.ones((8, 16)))  # expect: gathered
scattered = scatter_rows(jnp.ones((8, 16)))  # expect: scattered
stacked = stack_blocks(jnp.ones((8, 4)))  # expect: stacked
attended = scores(jnp.ones((2, 4, 16, 8)), jnp.ones((2, 2, 16, 8)))  # expect: attended
