"""c7: NNX layers annotated with `kernel_init=nnx.with_partitioning(init, spec)` under `jax.set_mesh` (Auto mesh)."""
import jax
from flax import nnx
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)


class MLP(nnx.Module):
    def __init__(self, d_model: int, d_ff: int, *, rngs: nnx.Rngs):
        self.up = nnx.Linear(
            d_model,
            d_ff,
            kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), ("data", "model")),
            bias_init=nnx.with_partitioning(nnx.initializers.zeros_init(), ("model",)),
            rngs=rngs,
        )
        self.down = nnx.Linear(
            d_ff,
            d_model,
            kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), ("model", "data")),
            use_bias=False,
            rngs=rngs,
        )


with jax.set_mesh(mesh):
    model = MLP(64, 256, rngs=nnx.Rngs(0))  # expect: model
    layer = nnx.Linear(32, 16, kernel_init=nnx.with_partitioning(nnx.initializers.ones_init(), (None, "model")), rngs=nnx.Rngs(1))  # expect: layer
