"""Real code (flax tests/nnx/spmd_test.py `test_out_sharding_embed`): an NNX module resharded
whole, `emb = reshard(emb, P("X"))`, and a model put on devices with one spec for all of its
variables. A module is a pytree whose leaves are its variables: JAX places each of them, and
shardls gives one site per variable, named after its path; a spec longer than one of them (a
bias) is JAX's error for that variable.
"""

import jax
from flax import nnx
from jax.sharding import AxisType, reshard
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit, AxisType.Explicit))


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.up = nnx.Linear(4, 8, rngs=rngs)
        self.down = nnx.Linear(8, 4, use_bias=False, rngs=rngs)


with jax.set_mesh(mesh):
    emb = nnx.Embed(num_embeddings=8, features=4, rngs=nnx.Rngs(0))
    emb = reshard(emb, P("X"))  # expect: emb
    model = jax.device_put(MLP(nnx.Rngs(1)), P("Y"))  # expect: model


class Head(nnx.Module):
    def __init__(self, rngs):
        self.out = nnx.Linear(8, 4, rngs=rngs)


with jax.set_mesh(mesh):
    head = jax.device_put(Head(nnx.Rngs(2)), P(None, "Y"))  # expect-error: SH002
