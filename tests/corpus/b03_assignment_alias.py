"""b3: assignment aliases: `P = jax.sharding.PartitionSpec`, `PS = ...`, `Ps = PartitionSpec`, `P_spec`."""
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec
import numpy as np

P = jax.sharding.PartitionSpec
PS = PartitionSpec
Ps = PartitionSpec
P_spec = PS
NS = NamedSharding

mesh = Mesh(np.array(jax.devices()).reshape(1, 4, 2), ("dp", "fsdp", "mp"))
a = jax.device_put(jnp.zeros((8, 8)), NS(mesh, P("fsdp", "mp")))  # expect: a
b = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, PS(("dp", "fsdp"), None)))  # expect: b
c = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, Ps(None, ("fsdp", "mp"))))  # expect: c
d = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P_spec("mp")))  # expect: d
