"""c2: a bare P in `device_put` under a context mesh: `with jax.set_mesh(...)` and the global setter."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("fsdp", "tp"), axis_types=(AxisType.Explicit,) * 2)

with jax.set_mesh(mesh):
    a = jax.device_put(jnp.zeros((16, 16)), P("fsdp", "tp"))  # expect: a
    b = jax.device_put(jnp.zeros((16, 16)), device=P("tp"))  # expect: b

other = jax.make_mesh((8,), ("batch",), axis_types=(AxisType.Auto,))
jax.set_mesh(other)
c = jax.device_put(jnp.zeros((16, 16)), P("batch"))  # expect: c

with jax.set_mesh(mesh):
    d = jax.device_put(jnp.zeros((8, 4)), P(None, "tp"))  # expect: d
e = jax.device_put(jnp.zeros((24, 4)), P("batch"))  # expect: e
