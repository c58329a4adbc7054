"""c6: the decorator form of `jax.shard_map` with the mesh taken from `jax.set_mesh` (no `mesh=`).

The mesh is Explicit, so the inputs must already carry the layout the in_specs name."""
import functools

import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("batch", "tp"), axis_types=(AxisType.Explicit,) * 2)


@functools.partial(jax.shard_map, in_specs=P("batch", "tp"), out_specs=P("batch", "tp"))
def double(block):
    doubled = block * 2  # expect: block
    return doubled


@jax.shard_map(in_specs=(P("batch"), P()), out_specs=P("batch"))
def add_bias(x, b):
    return x + b  # expect: x, b


with jax.set_mesh(mesh):
    x = jax.device_put(jnp.ones((8, 8)), P("batch", "tp"))
    y = double(x)  # expect: y
    rows = jax.device_put(jnp.ones((16, 4)), P("batch"))
    z = add_bias(rows, jnp.ones((4,)))  # expect: z
