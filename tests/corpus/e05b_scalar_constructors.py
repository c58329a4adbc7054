"""Scalars written as `jnp.float32(1.0)`, `jnp.array(0.0)`, `jnp.asarray(2)`: `P()` is fine, `P(None)` is not."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
lr = jax.device_put(jnp.float32(1.0), NamedSharding(mesh, P()))  # expect: lr
bad_lr = jax.device_put(jnp.float32(1.0), NamedSharding(mesh, P(None)))  # expect-error: SH003
bad_loss = jax.device_put(jnp.array(0.0), NamedSharding(mesh, P(None)))  # expect-error: SH003
bad_step = jax.device_put(jnp.asarray(2), NamedSharding(mesh, P(None)))  # expect-error: SH003
