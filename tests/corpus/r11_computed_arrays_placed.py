"""Real code places arrays it has just computed, not freshly created ones.

jax-llm-examples */ragged_attention.py: `jax.device_put(v / jnp.linalg.norm(v, axis=-1)[..., None], ...)`;
flax docs_nnx/guides/flax_gspmd.ipynb: `jax.device_put(rngs.normal((8, 1024)), P('data', None))`;
`jnp.stack([x] * n)`, reductions with `axis=`/`keepdims=` and elementwise functions keep the
shape known, so each of these sites gets its per-device shape.
"""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "x"), axis_types=(AxisType.Auto, AxisType.Auto))
v = jax.random.normal(jax.random.key(0), (4, 8, 16, 32), dtype=jnp.bfloat16)
k = jax.device_put(
    v / jnp.linalg.norm(v, axis=-1)[..., None], NamedSharding(mesh, P(None, "x", None, None))
)  # expect: k
rngs = nnx.Rngs(0)
label = jax.device_put(rngs.normal((8, 1024)), NamedSharding(mesh, P("data", None)))  # expect: label
ids = jax.device_put(rngs.randint((8, 16), 0, 100), NamedSharding(mesh, P("data", "x")))  # expect: ids
stacked = jax.device_put(jnp.stack([v] * 4), NamedSharding(mesh, P("x")))  # expect: stacked
summed = jax.device_put(
    jnp.sum(v, axis=(0, 2), keepdims=True), NamedSharding(mesh, P(None, "x"))
)  # expect: summed
means = jax.device_put(v.mean(axis=1), NamedSharding(mesh, P("data", None, "x")))  # expect: means
joined = jax.device_put(jnp.concatenate([v, v], axis=1), NamedSharding(mesh, P(None, "x")))  # expect: joined
probs = jax.device_put(
    jax.nn.softmax(jnp.expand_dims(v, 0)), NamedSharding(mesh, P(None, "data"))
)  # expect: probs
best = jax.device_put(jnp.argmax(v, axis=-1), NamedSharding(mesh, P("data", "x")))  # expect: best
