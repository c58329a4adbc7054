"""r47: jit shardings where they are written take the arrays of the calls (issue #12 §2).

`jax.jit(f, in_shardings=..., out_shardings=...)` (or its decorator) writes shardings that meet
arrays only where the function is called; their sites where written show the array every visible
call lays out with them when those agree, and report nothing of that shape (each call reports its
own problems, where JAX raises them). Modelled on flax docs/guides/parallel_training/
flax_on_pjit.ipynb (`jit_init_fn = jax.jit(init_fn, static_argnums=(2, 3), in_shardings=
(mesh_sharding(PartitionSpec()), x_sharding), ...)` called once) and flax_fundamentals/
rng_guide.ipynb (`@partial(jax.jit, in_shardings=..., out_shardings=...)` on a forward pass),
with a second function called with two shapes and one uneven call JAX rejects.
"""

import functools

import jax
import jax.numpy as jnp
from jax import random
from jax.experimental import mesh_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec

mesh = Mesh(devices=mesh_utils.create_device_mesh((2, 4)), axis_names=("data", "model"))


def mesh_sharding(pspec: PartitionSpec) -> NamedSharding:
    return NamedSharding(mesh, pspec)


BATCH, DEPTH = 8, 64
x_sharding = mesh_sharding(PartitionSpec("data", None))


def init_fn(k, x, depth, scale):
    w = random.normal(k, (x.shape[-1], depth)) * scale
    return x @ w


jit_init_fn = jax.jit(
    init_fn,
    static_argnums=(2, 3),
    in_shardings=(mesh_sharding(PartitionSpec()), x_sharding),
    out_shardings=mesh_sharding(PartitionSpec("data", "model")),
)
x = jax.device_put(jnp.ones((BATCH, DEPTH)), x_sharding)  # expect: x
k = random.key(0)
initialized = jit_init_fn(k, x, 32, 0.5)  # expect: initialized


@functools.partial(jax.jit, in_shardings=(x_sharding,), out_shardings=x_sharding)
def forward(inputs):
    return jnp.tanh(inputs) * 2.0


out = forward(jnp.ones((BATCH, 4)))  # expect: out
again = forward(jnp.zeros((BATCH, 4)))  # expect: again

rows = jax.jit(lambda a: a + 1, in_shardings=x_sharding)
small = rows(jnp.ones((4, 2)))  # expect: small
large = rows(jnp.ones((16, 2)))  # expect: large
uneven = rows(jnp.ones((3, 2)))  # expect-error: SH001
