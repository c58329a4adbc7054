"""Real code (maxtext layers, jax-llm-examples model.py): helpers take the array and the mesh as
parameters and unpack the shape, `b, s, d = x.shape`. Called here with known values, every call
gets its layout; with no call shardls still knows the rank (see tests/analysis/test_symbolic_sites.py).
"""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P


def shard_activations(x, mesh):
    b, s, d = x.shape
    y = jax.device_put(x, NamedSharding(mesh, P("data", None, "model")))  # expect: y
    return y.reshape(b * s, d)


mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
flat = shard_activations(jnp.zeros((4, 6, 16)), mesh)
