"""r53: a tutorial binds `mesh` once per section (jax's docs/notebooks/shard_map.ipynb: `mesh =
Mesh(jax.devices()[:4], ('i',))`, sections later `mesh = Mesh(jax.devices()[:S], ('stages',))`)
and calls a helper that reads the global `mesh` in between: the helper meets the mesh bound when
it runs, not the module's last one (shardls reported SH005 "'i' is not an axis of the mesh
(stages=2)" there, as a warning assuming the last binding)."""

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(jax.devices()[:4], ("i",))


def device_put(x, pspec):
    placed = jax.device_put(x, NamedSharding(mesh, pspec))  # expect: placed
    return placed


def put_rows(x):
    return device_put(x, P("i"))


lhs = device_put(jnp.zeros((8, 8)), P("i", None))
rhs = put_rows(jnp.zeros((8, 4)))

mesh = Mesh(jax.devices()[:2], ("stages",))
batch = jax.device_put(jnp.zeros((8, 4)), NamedSharding(mesh, P("stages")))  # expect: batch
staged = device_put(jnp.zeros((6, 2)), P("stages"))
