"""Real code (axlearn `paged_kv_cache_test.py`): `jax.make_mesh((1, 1), ..., devices=[jax.devices()[0]])`
builds a mesh on exactly the devices listed. shardls used to count the devices of the whole
machine (8 assumed) and say the mesh used only the first one of them (SH107); the list has one.
"""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

one = jax.make_mesh((1, 1), ("data", "model"), devices=[jax.devices()[0]])
x = jax.device_put(jnp.zeros((4, 8)), NamedSharding(one, P("data", "model")))  # expect: x

two = [jax.devices()[0], jax.devices()[1]]
pair = jax.make_mesh((2,), ("data",), devices=two)
y = jax.device_put(jnp.zeros((4, 8)), NamedSharding(pair, P("data")))  # expect: y

too_big = jax.make_mesh((4,), ("data",), devices=two)  # expect-error: SH104
