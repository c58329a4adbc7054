"""`nnx.vmap` without `transform_metadata`: the annotation stays one entry short, so
`nnx.get_partition_spec` shards the wrong dimension of the stacked kernel (JAX says nothing)."""

import jax
from flax import nnx
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)


@nnx.vmap(in_axes=0, out_axes=0)  # expect-warning: SH208
def create(rngs: nnx.Rngs) -> nnx.Linear:
    return nnx.Linear(
        16, 32, kernel_init=nnx.with_partitioning(nnx.initializers.zeros_init(), (None, "model")), rngs=rngs
    )


with jax.set_mesh(mesh):
    layers = create(nnx.Rngs(0).fork(split=4))
    state = nnx.state(layers)
    nnx.update(layers, jax.device_put(state, nnx.get_named_sharding(state, mesh)))  # expect: layers
