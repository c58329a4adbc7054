"""Errors: `P(None)` on a scalar (scalars take `P()`), for scalars made in different ways."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
loss = jnp.zeros(())
good = jax.device_put(loss, NamedSharding(mesh, P()))  # expect: good
bad = jax.device_put(loss, NamedSharding(mesh, P(None)))  # expect-error: SH003
step = jax.device_put(jnp.zeros((), jnp.int32), NamedSharding(mesh, P(None)))  # expect-error: SH003
