"""Explicit mode without Flax metadata: `kernel_init=functools.partial(init, out_sharding=P(...))`
and `nnx.Param(init(key, shape, dtype, out_sharding=...))` create arrays already sharded (JAX's
`out_sharding`, which needs Explicit axes and a `jax.set_mesh` mesh for a bare P)."""

import functools

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

explicit = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
init = nnx.initializers.zeros_init()


class Explicit(nnx.Module):
    def __init__(self, depth: int, rngs: nnx.Rngs):
        sharded = functools.partial(init, out_sharding=P(None, "model"))
        self.dense = nnx.Linear(depth, 2 * depth, use_bias=False, kernel_init=sharded, rngs=rngs)
        self.w = nnx.Param(init(rngs.params(), (depth, 8), jnp.float32, P("model", None)))


with jax.set_mesh(explicit):
    model = Explicit(64, nnx.Rngs(0))  # expect: model
no_mesh = nnx.Param(init(jax.random.key(0), (16, 8), jnp.float32, P("data")))  # expect-error: SH202
auto = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
with jax.set_mesh(auto):
    on_auto = nnx.Param(init(jax.random.key(0), (16, 8), jnp.float32, P("data")))  # expect-error: SH011
