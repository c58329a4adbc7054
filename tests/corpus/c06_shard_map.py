"""c6: `jax.shard_map(f, mesh=..., in_specs=..., out_specs=...)` on an Auto mesh: the block each device sees, and the global output."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))


def local_matmul(x, w):
    y = x @ w  # expect: x, w
    return jax.lax.psum(y, "model")


f = jax.shard_map(local_matmul, mesh=mesh, in_specs=(P("data", "model"), P("model", None)), out_specs=P("data", None))
x = jax.device_put(jnp.ones((16, 32)), NamedSharding(mesh, P("data", "model")))
w = jax.device_put(jnp.ones((32, 8)), NamedSharding(mesh, P("model", None)))
out = f(x, w)  # expect: out


def scale(block):
    return block * 2  # expect: block


g = jax.shard_map(scale, mesh=mesh, in_specs=P(("data", "model")), out_specs=P(("data", "model")))
scaled = g(jnp.ones((64, 3)))  # expect: scaled
