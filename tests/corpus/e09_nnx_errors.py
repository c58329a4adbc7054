"""Errors in NNX eager sharding: an indivisible annotated kernel, an unknown axis, and an annotated layer with no mesh."""
import jax
from flax import nnx
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
init = nnx.initializers.lecun_normal()

with jax.set_mesh(mesh):
    ok = nnx.Linear(16, 32, kernel_init=nnx.with_partitioning(init, ("data", "model")), rngs=nnx.Rngs(0))  # expect: ok
    uneven = nnx.Linear(3, 6, kernel_init=nnx.with_partitioning(init, (None, "model")), rngs=nnx.Rngs(0))  # expect-error: SH001

with jax.set_mesh(mesh):
    typo = nnx.Linear(16, 32, kernel_init=nnx.with_partitioning(init, ("data", "modle")), rngs=nnx.Rngs(0))  # expect-error: SH005

no_mesh = nnx.Linear(16, 32, kernel_init=nnx.with_partitioning(init, ("data", "model")), rngs=nnx.Rngs(0))  # expect-error: SH201
