"""c6: `jax.jit(jax.shard_map(...))` called later, and `jax.shard_map` applied inside a jitted function."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))


def matmul_block(x_block, w_block):
    partial = x_block @ w_block  # expect: x_block, w_block
    return jax.lax.psum(partial, "model")


sharded_matmul = jax.jit(jax.shard_map(matmul_block, mesh=mesh, in_specs=(P("data", "model"), P("model", None)), out_specs=P("data", None)))
x = jax.device_put(jnp.ones((16, 256)), NamedSharding(mesh, P("data", "model")))
w = jax.device_put(jnp.ones((256, 64)), NamedSharding(mesh, P("model", None)))
y = sharded_matmul(x, w)  # expect: y


def rowsum(rows):
    return rows.sum(axis=1, keepdims=True)  # expect: rows


@jax.jit
def total(a):
    return jax.shard_map(rowsum, mesh=mesh, in_specs=P(("data", "model")), out_specs=P(("data", "model")))(a)


sums = total(jnp.ones((32, 5)))
