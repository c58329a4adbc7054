"""if/else statements on literal flags at module level: JAX takes one branch, so the spec and size are known."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
USE_TENSOR_PARALLEL = True
SMALL = False

if USE_TENSOR_PARALLEL:
    w_spec = P(None, "model")
else:
    w_spec = P("data", None)

if SMALL:
    hidden = 64
else:
    hidden = 256

w = jax.device_put(jnp.zeros((hidden, 32)), NamedSharding(mesh, w_spec))  # expect: w
