"""Errors: a sharding built once and reused; JAX raises where it meets an indivisible shape, not where it is built."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
batch_sharding = NamedSharding(mesh, P("data"))
hidden_sharding = NamedSharding(mesh, P(None, "model"))

even = jax.device_put(jnp.zeros((8, 4)), batch_sharding)  # expect: even
odd = jax.device_put(jnp.zeros((7, 4)), batch_sharding)  # expect-error: SH001
wide = jax.device_put(jnp.zeros((3, 12)), hidden_sharding)  # expect: wide
narrow = jax.device_put(jnp.zeros((3, 10)), hidden_sharding)  # expect-error: SH001
