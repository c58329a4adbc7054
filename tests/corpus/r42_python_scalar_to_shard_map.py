"""Real code (flax docs/guides/flax_fundamentals/rng_guide.ipynb): a Linen model applied inside a
jitted and a `shard_map`ped `forward` (`module.apply(variables, x, add_noise, rngs=...)`), with
a Python `True` passed for `add_noise` and `P()` for it, `shmap_forward(variables, x, True,
apply_rngs)`. JAX makes a 0-d bool array of the `True`, one copy per device, and the body gets
that array; `module.apply` returns what the module's `__call__` returns for the input.
"""

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((8,), ("data",), axis_types=(AxisType.Auto,))
data_sharding = NamedSharding(mesh, P("data"))


class Model(nn.Module):
    @nn.compact
    def __call__(self, x, add_noise):
        x = nn.Dense(1)(x)
        return jnp.where(add_noise, x + jax.random.normal(self.make_rng("params"), x.shape), x)


module = Model()
init_rng, apply_rng = jax.random.split(jax.random.key(0))
x = jnp.ones((8, 1))
variables = module.init(init_rng, x, False)


def forward(variables, x, add_noise, rng):
    return module.apply(variables, x, add_noise, rngs={"params": rng})


jit_forward = jax.jit(forward, in_shardings=(None, data_sharding, None, None), out_shardings=data_sharding)
out = jit_forward(variables, x, True, apply_rng)  # expect: out


def sharded_forward(variables, x_block, add_noise, scale):
    noisy = jnp.where(add_noise, x_block * scale, x_block)  # expect: x_block, add_noise, scale
    return module.apply(variables, noisy, False, rngs={"params": jax.random.key(1)})


shmap_forward = jax.shard_map(
    sharded_forward, mesh=mesh, in_specs=(P(), P("data"), P(), P()), out_specs=P("data")
)
sharded = shmap_forward(variables, jnp.ones((16, 1)), True, 2.0)  # expect: sharded
