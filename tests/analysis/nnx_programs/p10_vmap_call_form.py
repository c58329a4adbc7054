"""`nnx.vmap(f, ...)(keys)`: the stack size comes from `jax.random.split(key, n)`."""

import jax
from flax import nnx
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)


def make_layer(key: jax.Array) -> nnx.Linear:
    init = nnx.with_partitioning(nnx.initializers.zeros_init(), ("data", "model"))
    return nnx.Linear(32, 64, kernel_init=init, use_bias=False, rngs=nnx.Rngs(key))


with jax.set_mesh(mesh):
    keys = jax.random.split(jax.random.key(0), 6)
    layers = nnx.vmap(make_layer, in_axes=0, out_axes=0, transform_metadata={nnx.PARTITION_NAME: None})(keys)
    state = nnx.state(layers)
    nnx.update(layers, jax.device_put(state, nnx.get_named_sharding(state, mesh)))  # expect: layers
