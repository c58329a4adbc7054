"""a9: star-unpacking a module constant into `make_mesh` (tunix demos)."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

MESH = [(2, 4), ("fsdp", "tp")]
mesh = jax.make_mesh(*MESH, axis_types=(AxisType.Auto,) * len(MESH[0]))
x = jax.device_put(jnp.zeros((8, 32)), NamedSharding(mesh, P("fsdp", "tp")))  # expect: x

with jax.set_mesh(mesh):
    y = jax.device_put(jnp.zeros((4, 4, 8)), P(None, "fsdp", "tp"))  # expect: y
