"""Modelled on jax-llm-examples */ragged_attention.py: `k, k_scale = k if isinstance(k, tuple) else (k, None)`.

`k` is a (quantised, scale) tuple, so after the conditional unpacking `k` is the quantised array
alone; the 4-entry spec meets that rank-4 array, not the rank-3 scale (no SH002).
"""
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((jax.device_count(),), ("x",), axis_types=(AxisType.Auto,))


def quantize(x):
    return x.astype(jnp.int8), jnp.ones(x.shape[:-1], jnp.bfloat16)


@jax.jit
def fn(k):
    k, k_scale = k if isinstance(k, tuple) else (k, None)

    @partial(jax.shard_map, mesh=mesh, in_specs=P(None, "x", None, None), out_specs=P(None, "x", None, None))
    def _fn(k_block):
        return k_block * 2

    return _fn(k)


placed = jax.device_put(jnp.zeros((4, 8, 64, 32)), NamedSharding(mesh, P(None, "x", None, None)))  # expect: placed
out = fn(quantize(placed))
