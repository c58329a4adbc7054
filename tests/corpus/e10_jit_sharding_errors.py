"""Errors in `jax.jit` shardings: indivisible in/out shardings, and a bare P with no `jax.set_mesh`."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))


def double(x):
    return x * 2


f_in = jax.jit(double, in_shardings=NamedSharding(mesh, P(None, "model")))
good = f_in(np.ones((4, 8), np.float32))  # expect: good
bad_in = f_in(np.ones((4, 6), np.float32))  # expect-error: SH001

f_out = jax.jit(double, out_shardings=NamedSharding(mesh, P("data", "model")))
bad_out = f_out(np.ones((3, 8), np.float32))  # expect-error: SH001

f_bare = jax.jit(double, out_shardings=P("data"))
bare = f_bare(np.ones((4, 8), np.float32))  # expect-error: SH202
