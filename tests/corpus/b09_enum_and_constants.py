"""b9: axis names from an Enum's `.value` and from module constants (maxtext `common_types`)."""
import enum

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

BATCH = "data"
EMBED = "model"
LENGTH = None


class ShardMode(enum.Enum):
    FSDP = "fsdp"
    TP = "tp"


mesh = jax.make_mesh((2, 4), ("fsdp", "tp"))
a = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P(ShardMode.FSDP.value, ShardMode.TP.value)))  # expect: a
b = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P(ShardMode.TP.value)))  # expect: b

mesh2 = jax.make_mesh((4, 2), (BATCH, EMBED))
c = jax.device_put(jnp.zeros((8, 6, 4)), NamedSharding(mesh2, P(BATCH, LENGTH, EMBED)))  # expect: c
