"""c10: Explicit mode: `kernel_init=functools.partial(init, out_sharding=P(...))` and `nnx.Param(init(key, shape, out_sharding=...))`."""
import functools

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
init_fn = nnx.initializers.lecun_normal()


class ExplicitDotReluDot(nnx.Module):
    def __init__(self, depth: int, rngs: nnx.Rngs):
        self.dot1 = nnx.Linear(depth, depth, use_bias=False, kernel_init=functools.partial(init_fn, out_sharding=P(None, "model")), rngs=rngs)
        self.w2 = nnx.Param(init_fn(rngs.params(), (depth, depth), jnp.float32, out_sharding=P("model", None)))


with jax.set_mesh(mesh):
    model = ExplicitDotReluDot(64, rngs=nnx.Rngs(0))  # expect: model
