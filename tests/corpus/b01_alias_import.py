"""b1: `from jax.sharding import PartitionSpec as P`, and the plain `PartitionSpec` import."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
a = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("data", None)))  # expect: a
b = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, PartitionSpec(None, "model")))  # expect: b
spec = P("model")
c = jax.device_put(jnp.zeros((12, 2)), NamedSharding(mesh, spec))  # expect: c
