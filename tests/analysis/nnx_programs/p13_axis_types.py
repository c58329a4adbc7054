"""Explicit meshes shard parameters with `reshard`; a mesh mixing Auto and Explicit axes is
rejected by Flax."""

import jax
from flax import nnx
from jax.sharding import AxisType

explicit = jax.make_mesh((2, 4), ("data", "model"))
mixed = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Explicit))
init = nnx.initializers.zeros_init()

with jax.set_mesh(explicit):
    dense = nnx.Linear(
        64, 128, kernel_init=nnx.with_partitioning(init, ("model", "data")), rngs=nnx.Rngs(0)
    )  # expect: dense
with jax.set_mesh(mixed):
    bad = nnx.Linear(
        64, 128, kernel_init=nnx.with_partitioning(init, ("data", "model")), rngs=nnx.Rngs(0)
    )  # expect-error: SH012
