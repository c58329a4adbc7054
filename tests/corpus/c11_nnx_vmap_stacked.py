"""c11/d9: layers stacked with `nnx.vmap(transform_metadata={nnx.PARTITION_NAME: None})`: a leading layer axis."""
import jax
from flax import nnx
from jax.sharding import AxisType

NUM_LAYERS = 4
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)


class Layer(nnx.Module):
    def __init__(self, dim: int, rngs: nnx.Rngs):
        self.linear = nnx.Linear(
            dim,
            2 * dim,
            kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), ("data", "model")),
            bias_init=nnx.with_partitioning(nnx.initializers.zeros_init(), ("model",)),
            rngs=rngs,
        )


@nnx.split_rngs(splits=NUM_LAYERS)
@nnx.vmap(in_axes=(0,), out_axes=0, transform_metadata={nnx.PARTITION_NAME: None})
def create_stack(rngs: nnx.Rngs):
    return Layer(16, rngs=rngs)


with jax.set_mesh(mesh):
    stack = create_stack(nnx.Rngs(0))  # expect: stack
