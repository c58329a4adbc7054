"""`eager_sharding=False` makes the annotation metadata only: nothing is laid out when the
parameter is made, so an annotation that would fail (wrong rank, unknown axes) raises nothing
there (flax's spmd tests do this); the same annotation applied eagerly fails."""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)

with jax.set_mesh(mesh):
    lazy = nnx.Param(jnp.array(0), out_sharding=("din", "dout"), eager_sharding=False)
    eager = nnx.Param(jnp.zeros((8, 4)), out_sharding=("data", "dout"))  # expect-error: SH005


class Layer(nnx.Module):
    def __init__(self) -> None:
        self.w = nnx.Param(jnp.zeros((8, 4)), out_sharding=("data", "model"))


with jax.set_mesh(mesh):
    layer = Layer()  # expect: layer
