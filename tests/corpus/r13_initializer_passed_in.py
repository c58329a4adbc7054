"""Real code (maxtext layers/moe.py, linears.py): the initializer is a constructor argument, and
the parameter is `nnx.Param(self.kernel_init(key, shape, dtype, ...), out_sharding=...)`. Flax's
initializer protocol gives the array its shape."""

import operator

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType


def nd_dense_init(scale):
    def init_fn(key, shape, dtype, in_axis, out_axis):
        return jax.nn.initializers.variance_scaling(scale, "fan_in", "truncated_normal", in_axis, out_axis)(
            key, shape, dtype
        )

    return init_fn


class RoutedMoE(nnx.Module):
    def __init__(self, num_experts, emb_dim, mlp_dim, kernel_init, rngs):
        self.kernel_init = kernel_init
        self.wi = nnx.Param(
            self.kernel_init(rngs.params(), (num_experts, emb_dim, mlp_dim), jnp.float32, (1,), (2,)),
            out_sharding=(None, "data", "model"),
        )


mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit, AxisType.Explicit))
with jax.set_mesh(mesh):
    moe = RoutedMoE(4, 16, 32, nd_dense_init(1.0), nnx.Rngs(0))  # expect: moe


class Dense(nnx.Module):
    """The initializer comes from where shardls cannot see it (here `operator.attrgetter`)."""

    def __init__(self, kernel_init, rngs):
        self.kernel = nnx.Param(
            kernel_init(rngs.params(), (16, 32), jnp.float32), out_sharding=("data", "model")
        )


with jax.set_mesh(mesh):
    dense = Dense(operator.attrgetter("lecun_normal")(nnx.initializers)(), nnx.Rngs(1))  # expect: dense
