"""Errors: `P.UNCONSTRAINED` in `device_put` (JAX raises KeyError); fine in `with_sharding_constraint` on Auto axes."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

auto = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
x = jnp.zeros((16, 32))
bad = jax.device_put(x, NamedSharding(auto, P(P.UNCONSTRAINED, "model")))  # expect-error: SH008


@jax.jit
def f(x):
    return jax.lax.with_sharding_constraint(x, NamedSharding(auto, P(P.UNCONSTRAINED, "model")))


y = f(x)
explicit = jax.make_mesh((2, 4), ("data", "model"))
needs_auto = NamedSharding(explicit, P(P.UNCONSTRAINED))  # expect-error: SH006
