"""Errors: a spec with more entries than the array has dimensions (device_put, constraint, Auto and Explicit)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

explicit = jax.make_mesh((2, 4), ("data", "model"))
auto = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
vector = jnp.zeros((16,))
too_long = jax.device_put(vector, NamedSharding(explicit, P("data", "model")))  # expect-error: SH002
trailing_none = jax.device_put(vector, NamedSharding(auto, P("data", None)))  # expect-error: SH002
constrained = jax.lax.with_sharding_constraint(jnp.zeros((8, 8)), NamedSharding(auto, P(None, None, "model")))  # expect-error: SH002
right = jax.device_put(vector, NamedSharding(auto, P("data")))  # expect: right
