"""a6: a subset of the devices: `Mesh(jax.devices()[:4], ...)` and `make_mesh(..., devices=...)`."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

half = Mesh(jax.devices()[:4], ("i",))
a = jax.device_put(jnp.zeros((8, 2)), NamedSharding(half, P("i")))  # expect: a

quad = jax.make_mesh((2, 2), ("x", "y"), devices=jax.devices()[4:])
b = jax.device_put(jnp.zeros((6, 4)), NamedSharding(quad, P("x", "y")))  # expect: b

pair = Mesh(np.array(jax.devices()[:2]), ("p",))
c = jax.device_put(jnp.zeros((2, 5)), NamedSharding(pair, P("p")))  # expect: c
