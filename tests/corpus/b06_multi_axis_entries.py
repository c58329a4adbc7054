"""b6: one dimension over several mesh axes, including a tuple held in a config attribute."""
import dataclasses

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


@dataclasses.dataclass(frozen=True)
class Config:
    data_sharding: tuple = ("fsdp",)
    act_sharding: tuple = (("data", "fsdp"), "tensor")


config = Config()
mesh = jax.make_mesh((2, 2, 2), ("data", "fsdp", "tensor"))
a = jax.device_put(jnp.zeros((16, 8)), NamedSharding(mesh, P(("data", "fsdp"), "tensor")))  # expect: a
b = jax.device_put(jnp.zeros((16, 8)), NamedSharding(mesh, jax.P(config.data_sharding)))  # expect: b
c = jax.device_put(jnp.zeros((16, 8)), NamedSharding(mesh, P(*config.act_sharding)))  # expect: c
d = jax.device_put(jnp.zeros((16, 8)), NamedSharding(mesh, P(None, ("tensor", "data", "fsdp"))))  # expect: d
