"""Real code (flax docs_nnx/guides/optimization_cookbook.ipynb): after each training step the
model is resharded whole, `model = reshard(model, P(None, None))`, a spec longer than the rank of
its biases. `reshard` and `out_sharding=` drop extra `None` entries (JAX 0.10 makes `P(None,)` of
it), unlike `device_put`, so nothing is rejected; an extra entry naming an axis still is.
"""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, reshard
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Explicit))


class Model(nnx.Module):
    def __init__(self, rngs):
        self.first = nnx.Linear(2, 8, rngs=rngs)
        self.second = nnx.Linear(8, 8, rngs=rngs)


with jax.set_mesh(mesh):
    model = Model(nnx.Rngs(0))
    model = reshard(model, P(None, None))  # expect: model
    scalar = reshard(jnp.float32(1.0), P(None, None))  # expect: scalar
    row = jnp.zeros((8,), out_sharding=P("x", None))  # expect: row

with jax.set_mesh(mesh):
    bad = reshard(jnp.zeros(8), P(None, "y"))  # expect-error: SH002
