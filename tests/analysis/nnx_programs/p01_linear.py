"""Linear with `with_partitioning` on kernel and bias; Auto and Explicit meshes; param_dtype."""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

auto = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
explicit = jax.make_mesh((4, 2), ("data", "model"))
init = nnx.initializers.lecun_normal()  # one real initializer; the others are cheap to compile
zeros = nnx.initializers.zeros_init()

with jax.set_mesh(auto):
    dense = nnx.Linear(  # expect: dense
        1024,
        4096,
        kernel_init=nnx.with_partitioning(init, ("data", "model")),
        bias_init=nnx.with_partitioning(nnx.initializers.zeros_init(), ("model",)),
        rngs=nnx.Rngs(0),
    )
    joint = nnx.Linear(
        16, 32, kernel_init=nnx.with_partitioning(zeros, (None, ("data", "model"))), rngs=nnx.Rngs(0)
    )  # expect: joint
    short = nnx.Linear(
        16, 32, kernel_init=nnx.with_partitioning(zeros, P("data")), use_bias=False, rngs=nnx.Rngs(0)
    )  # expect: short
    half = nnx.Linear(
        64,
        8,
        param_dtype=jnp.bfloat16,
        kernel_init=nnx.with_partitioning(zeros, ("model", None)),
        rngs=nnx.Rngs(0),
    )  # expect: half

with jax.set_mesh(explicit):
    swapped = nnx.Linear(
        8, 32, kernel_init=nnx.with_partitioning(zeros, ("model", "data")), rngs=nnx.Rngs(1)
    )  # expect: swapped
    uneven = nnx.Linear(
        3, 6, kernel_init=nnx.with_partitioning(zeros, (None, "data")), rngs=nnx.Rngs(1)
    )  # expect-error: SH001
