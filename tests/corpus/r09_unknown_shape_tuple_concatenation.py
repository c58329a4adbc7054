"""Real code (jax-llm-examples */ragged_attention.py): a new shape built from slices of an unknown one.

`q.shape[:1] + (kv_heads, -1) + q.shape[2:]` with `q.shape` unknown has an unknown rank, not
rank 1: no SH002 for the 4-entry `in_specs` of the shard_map.
"""
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((jax.device_count(),), ("x",), axis_types=(AxisType.Auto,))


def fn(q, kv_heads):
    q_ = q.reshape(q.shape[:1] + (kv_heads, -1) + q.shape[2:])

    @partial(jax.shard_map, mesh=mesh, in_specs=P(None, "x", None, None), out_specs=P(None, "x", None, None))
    def _fn(q_block):
        return q_block * 2

    return _fn(q_).reshape(q.shape)


q0 = jax.device_put(jnp.ones((4, 16, 32)), NamedSharding(mesh, P(None, "x", None)))  # expect: q0
q1 = q0 / jnp.linalg.norm(q0, axis=-1)[..., None]
out = fn(q1, 8)
