"""Dimensions sized by the device count: one row per device, `len(jax.devices())`,
`jax.device_count()` and `jax.local_device_count()` (one process here, so the same), and
arithmetic on them. Without a stated device count these sizes are an assumption of shardls's,
so a problem they decide is a warning; this corpus states 8 devices, so here it is an error.
"""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
per_device = jax.device_put(
    jnp.zeros((len(jax.devices()), 16)), NamedSharding(mesh, P("model"))
)  # expect: per_device
counts = jax.device_put(
    jnp.arange(jax.device_count() * 2), NamedSharding(mesh, P(("data", "model")))
)  # expect: counts
local = jax.device_put(
    jnp.ones((jax.local_device_count() // 2, 4)), NamedSharding(mesh, P("model", "data"))
)  # expect: local

short = jax.device_put(
    jnp.zeros((len(jax.devices()) - 1, 16)), NamedSharding(mesh, P("model"))
)  # expect-error: SH001
