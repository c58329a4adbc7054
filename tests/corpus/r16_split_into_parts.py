"""Arrays cut into parts before they are placed: `jnp.split` into equal parts or at indices,
`jnp.array_split` (the first parts one longer), `jnp.hsplit`/`jnp.vsplit`, unpacked or indexed.
Each part has its own shape; a part that no longer divides by the mesh axis is JAX's error.
"""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
qkv = jnp.zeros((8, 24))
q, k, v = jnp.split(qkv, 3, axis=-1)
query = jax.device_put(q, NamedSharding(mesh, P("data", "model")))  # expect: query
head, body, tail = jnp.split(qkv, [4, 20], axis=1)
middle = jax.device_put(body, NamedSharding(mesh, P("data", "model")))  # expect: middle
chunks = jnp.array_split(jnp.ones((10, 8)), 3)
first = jax.device_put(chunks[0], NamedSharding(mesh, P("data", "model")))  # expect: first
left = jax.device_put(jnp.hsplit(qkv, 2)[0], NamedSharding(mesh, P(None, "model")))  # expect: left
top = jax.device_put(jnp.vsplit(qkv, [2])[1], NamedSharding(mesh, P("data")))  # expect: top

odd = jax.device_put(chunks[1], NamedSharding(mesh, P("data")))  # expect-error: SH001
