"""b2: `jax.P(...)` and `from jax import P` (newer JAX docs, bonsai)."""
import jax
import jax.numpy as jnp
from jax import P

mesh = jax.make_mesh((4, 2), ("data", "model"))
a = jax.device_put(jnp.zeros((8, 16)), jax.NamedSharding(mesh, jax.P("data", "model")))  # expect: a
b = jax.device_put(jnp.zeros((8, 16)), jax.sharding.NamedSharding(mesh, P("model")))  # expect: b
with jax.set_mesh(mesh):
    c = jax.device_put(jnp.zeros((4, 6)), jax.P("data", "model"))  # expect: c
