"""b4: fully qualified spellings: `jax.sharding.PartitionSpec(...)`, a module alias, and `jax.NamedSharding`."""
import jax
import jax.numpy as jnp
import jax.sharding as shd
from jax import sharding

mesh = jax.make_mesh((2, 4), ("foo", "bar"))
a = jax.device_put(jnp.zeros((8, 8)), jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("foo", "bar")))  # expect: a
b = jax.device_put(jnp.zeros((8, 8)), shd.NamedSharding(mesh, shd.PartitionSpec("bar")))  # expect: b
c = jax.device_put(jnp.zeros((8, 8)), sharding.NamedSharding(mesh, sharding.PartitionSpec(None, ("foo", "bar"))))  # expect: c
d = jax.device_put(jnp.zeros((8, 8)), jax.NamedSharding(mesh, jax.P("foo")))  # expect: d
