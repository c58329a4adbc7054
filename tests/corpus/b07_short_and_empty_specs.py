"""b7: specs shorter than the rank (implicit trailing None), `P()` on any rank including scalars."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
rank4 = jax.device_put(jnp.zeros((4, 6, 8, 10)), NamedSharding(mesh, P("data")))  # expect: rank4
rank3 = jax.device_put(jnp.zeros((3, 8, 5)), NamedSharding(mesh, P(None, "model")))  # expect: rank3
scalar = jax.device_put(jnp.zeros(()), NamedSharding(mesh, P()))  # expect: scalar
vector = jax.device_put(jnp.arange(16), NamedSharding(mesh, P()))  # expect: vector
