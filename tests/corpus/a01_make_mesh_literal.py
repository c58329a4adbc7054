"""a1: `jax.make_mesh` with literal sizes and names (Explicit axes by default), specs of the table."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jnp.zeros((16, 32))

rows = jax.device_put(x, NamedSharding(mesh, P("data")))  # expect: rows
cols = jax.device_put(x, NamedSharding(mesh, P(None, "model")))  # expect: cols
both = jax.device_put(x, NamedSharding(mesh, P("data", "model")))  # expect: both
swapped = jax.device_put(x, NamedSharding(mesh, P("model", "data")))  # expect: swapped
joint = jax.device_put(x, NamedSharding(mesh, P(("data", "model"))))  # expect: joint
joint_rev = jax.device_put(x, NamedSharding(mesh, P(("model", "data"))))  # expect: joint_rev
replicated = jax.device_put(x, NamedSharding(mesh, P()))  # expect: replicated
nones = jax.device_put(x, NamedSharding(mesh, P(None, None)))  # expect: nones
cube = jax.device_put(jnp.ones((16, 32, 8)), NamedSharding(mesh, P("data")))  # expect: cube
empty = jax.device_put(jnp.zeros((0, 32)), NamedSharding(mesh, P(("data", "model"))))  # expect: empty
