"""a7: mesh sizes from the device count: `(jax.device_count(),)`, `(n // 2, 2)`, `(1, jax.device_count())`."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

batch = jax.make_mesh((jax.device_count(),), ("batch",))
a = jax.device_put(jnp.zeros((64, 10)), NamedSharding(batch, P("batch")))  # expect: a

n = len(jax.devices())
grid = jax.make_mesh((n // 2, 2), ("data", "model"))
b = jax.device_put(jnp.zeros((16, 16)), NamedSharding(grid, P("data", "model")))  # expect: b

SHARED_MESH_SHAPE = (1, jax.device_count())
shared = jax.make_mesh(SHARED_MESH_SHAPE, ("fsdp", "tp"))
c = jax.device_put(jnp.zeros((4, 32)), NamedSharding(shared, P("fsdp", "tp")))  # expect: c
