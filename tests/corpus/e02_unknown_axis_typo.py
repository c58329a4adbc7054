"""Errors: an axis name the mesh does not have ('modle' for 'model'), inline, in a variable and inside a tuple."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jnp.zeros((8, 16))
good = jax.device_put(x, NamedSharding(mesh, P("data", "model")))  # expect: good
typo = jax.device_put(x, NamedSharding(mesh, P("data", "modle")))  # expect-error: SH005
sharding = NamedSharding(mesh, P(("data", "batch")))  # expect-error: SH005
with jax.set_mesh(mesh):
    bare = jax.device_put(x, P("dat"))  # expect-error: SH005
