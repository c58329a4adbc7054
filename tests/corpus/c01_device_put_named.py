"""c1: `device_put(x, NamedSharding(mesh, P(...)))` inline, through a pre-built sharding, and in a loop of params."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
batch_sharding = NamedSharding(mesh, P("data"))
weight_sharding = NamedSharding(mesh, P(None, "model"))
replicated = NamedSharding(mesh, P())

batch = jax.device_put(np.zeros((32, 128), dtype=np.float32), batch_sharding)  # expect: batch
weight = jax.device_put(jnp.ones((128, 64)), weight_sharding)  # expect: weight
scale = jax.device_put(jnp.ones((64,)), replicated)  # expect: scale
inline = jax.device_put(jnp.zeros((8, 6)), NamedSharding(mesh, P("data", "model")))  # expect: inline
labels = jax.device_put(jnp.zeros((32,), dtype=jnp.int32), device=batch_sharding)  # expect: labels
