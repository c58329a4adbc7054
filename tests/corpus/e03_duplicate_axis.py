"""Errors: one mesh axis used twice in a spec (across dimensions, inside a tuple, across tuple and dim)."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jnp.zeros((8, 16))
twice = jax.device_put(x, NamedSharding(mesh, P("data", "data")))  # expect-error: SH004
in_tuple = NamedSharding(mesh, P(("model", "model")))  # expect-error: SH004
mixed = jax.device_put(x, NamedSharding(mesh, P(("data", "model"), "model")))  # expect-error: SH004
fine = jax.device_put(x, NamedSharding(mesh, P(("data", "model"), None)))  # expect: fine
