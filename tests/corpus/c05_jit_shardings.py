"""c5: `jax.jit(f, in_shardings=..., out_shardings=...)` with NamedShardings, with bare P under `set_mesh`, as a decorator."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
x_sharding = NamedSharding(mesh, P("data", None))
w_sharding = NamedSharding(mesh, P(None, "model"))


def matmul(x, w):
    return x @ w


f = jax.jit(matmul, in_shardings=(x_sharding, w_sharding), out_shardings=NamedSharding(mesh, P("data", "model")))
y = f(jnp.zeros((16, 32)), jnp.zeros((32, 64)))  # expect: y


@functools.partial(jax.jit, out_shardings=NamedSharding(mesh, P(("data", "model"))))
def make_table():
    return jnp.zeros((64, 4))


table = make_table()  # expect: table

with jax.set_mesh(mesh):
    g = jax.jit(lambda a: a * 2, in_shardings=P("model"), out_shardings=P(None, "model"))
    z = g(np.ones((8, 8), np.float32))  # expect: z
