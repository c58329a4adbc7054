"""Errors in `jax.shard_map`: an indivisible input block, an in_spec longer than the rank, and a typo'd axis."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))


def body(x):
    return x + 1  # expect: x


f = jax.shard_map(body, mesh=mesh, in_specs=P("data", "model"), out_specs=P("data", "model"))
ok = f(jnp.ones((4, 8)))  # expect: ok
uneven = f(jnp.ones((4, 6)))  # expect-error: SH001
too_long = f(jnp.ones((8,)))  # expect-error: SH002

g = jax.shard_map(lambda y: y, mesh=mesh, in_specs=P("modle"), out_specs=P("modle"))
typo = g(jnp.ones((8, 8)))  # expect-error: SH005
