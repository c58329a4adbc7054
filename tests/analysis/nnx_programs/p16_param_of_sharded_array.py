"""`nnx.Param` of an array already placed with `jax.device_put` on Auto axes (tunix's tests do
this): the parameter has that array's layout, and nothing about it is an error (it is not an
`out_sharding=`, which would need Explicit axes)."""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
weights = jax.device_put(jnp.zeros((2, 8)), NamedSharding(mesh, P(None, "model")))


class Holder(nnx.Module):
    def __init__(self, w: jax.Array):
        self.w = nnx.Param(w)
        self.w16 = nnx.Param(w.astype(jnp.bfloat16))  # still the placed array's layout


holder = Holder(weights)  # expect: holder
