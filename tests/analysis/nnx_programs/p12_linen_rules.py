"""Linen's `logical_to_mesh_axes` walks the rules in order and skips a rule whose mesh axes are
taken (unlike NNX's dict): the same rules give different specs."""

import flax.linen as nn
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
rules = (("batch", "data"), ("embed", "model"), ("mlp", "model"), ("mlp", "data"), ("kv", None))

x = jnp.zeros((16, 32))
first_free = jax.device_put(
    x, NamedSharding(mesh, nn.logical_to_mesh_axes(("embed", "mlp"), rules))
)  # expect: first_free
taken = jax.device_put(
    x, NamedSharding(mesh, nn.logical_to_mesh_axes(("batch", "mlp"), rules))
)  # expect: taken
unknown = jax.device_put(
    x, NamedSharding(mesh, nn.logical_to_mesh_axes(("kv", "length"), rules))
)  # expect: unknown
