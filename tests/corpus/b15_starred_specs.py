"""b15: starred spec entries: `P(*base, 'model')`, `P(*([None] * 3), 'x')`, `P(None, *spec)`, `jax.P(*spec[1:])`."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("x", "model"))
base = ("x", None)
spec = ("x", "model")
act_shd = P("x", None, "model")

a = jax.device_put(jnp.zeros((4, 6, 8)), NamedSharding(mesh, P(*base, "model")))  # expect: a
b = jax.device_put(jnp.zeros((3, 3, 3, 4)), NamedSharding(mesh, P(*([None] * 3), "x")))  # expect: b
c = jax.device_put(jnp.zeros((5, 8, 8)), NamedSharding(mesh, P(None, *spec)))  # expect: c
d = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, jax.P(*spec[1:])))  # expect: d
e = jax.device_put(jnp.zeros((6, 8)), NamedSharding(mesh, P(*act_shd[1:])))  # expect: e
