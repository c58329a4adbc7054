"""Errors: a bare P where JAX needs `jax.set_mesh`: no context at all, and under the deprecated `with mesh:`."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
x = jnp.zeros((8, 16))
no_context = jax.device_put(x, P("data"))  # expect-error: SH202
with mesh:  # expect-warning: SH203
    legacy = jax.device_put(x, P("data"))  # expect-error: SH202
with mesh:  # expect-warning: SH203
    constrained = jax.lax.with_sharding_constraint(x, P("data", "model"))  # expect: constrained
with jax.set_mesh(mesh):
    fine = jax.device_put(x, P("data"))  # expect: fine
