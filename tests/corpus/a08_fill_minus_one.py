"""a8: config-driven meshes with one `-1` axis filled from the device count (EasyDeL / EasyLM style)."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


@dataclasses.dataclass
class ShardingConfig:
    sharding_axis_dims: tuple = (1, -1, 2)
    sharding_axis_names: tuple = ("dp", "fsdp", "tp")


cfg = ShardingConfig()
mesh = Mesh(np.array(jax.devices()).reshape(cfg.sharding_axis_dims), cfg.sharding_axis_names)
w = jax.device_put(jnp.zeros((32, 64)), NamedSharding(mesh, P("fsdp", "tp")))  # expect: w

mesh_dims = "1,-1,1"
shape = [int(d) for d in mesh_dims.split(",")]
mesh2 = Mesh(np.array(jax.devices()).reshape(shape), ("dp", "fsdp", "mp"))
v = jax.device_put(jnp.zeros((16, 3)), NamedSharding(mesh2, P(("dp", "fsdp"), "mp")))  # expect: v
