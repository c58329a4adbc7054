"""Real code (flax `tests/nnx/transforms_test.py`, `test_simple_data_parallel`): an `nnx.Linear`
made under `jax.set_mesh` on Auto axes is passed whole to an `nnx.shard_map` whose body returns
`m(x)`.

The call of a layer was modelled only on Explicit axes, where the input has a sharded type; on
Auto axes `m(x)` was unknown, and so was the shard_map's output. Its shape is the one Flax's
`dot_general` with the `(in_features, out_features)` kernel gives, `x.shape[:-1] +
(out_features,)`, float32 for a float32 kernel; an input whose last size is not `in_features`
makes JAX raise, and then nothing is known.
"""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices(), ("data",))

with jax.set_mesh(mesh):
    m = nnx.Linear(in_features=2, out_features=3, rngs=nnx.Rngs(0))
x = jnp.ones((32, 2))


@nnx.shard_map(mesh=mesh, in_specs=(P(None), P("data")), out_specs=P("data"))
def f(m, x):
    return m(x)


y = f(m, x)  # expect: y

wide = nnx.Linear(2, 16, dtype=jnp.bfloat16, rngs=nnx.Rngs(1))
z = jax.device_put(wide(x), NamedSharding(mesh, P(None, "data")))  # expect: z
