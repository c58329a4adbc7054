"""a10: the context mesh set as a side effect inside a config dataclass's `__post_init__` (JAX cookbook `Config`)."""
import dataclasses

import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P


@dataclasses.dataclass
class Config:
    mesh_axis_names: tuple = ("fsdp", "tp")
    mesh_shape: tuple = (4, 2)
    d_model: int = 64

    def __post_init__(self):
        self.mesh = jax.make_mesh(self.mesh_shape, self.mesh_axis_names, axis_types=(AxisType.Explicit,) * 2)
        jax.set_mesh(self.mesh)


cfg = Config()
w = jax.device_put(jnp.zeros((cfg.d_model, 4 * cfg.d_model)), P("fsdp", "tp"))  # expect: w
b = jnp.zeros((4 * cfg.d_model,), out_sharding=P("tp"))  # expect: b
