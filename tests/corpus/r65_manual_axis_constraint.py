"""r65: `with_sharding_constraint` naming the axis a `shard_map` body holds as Manual.

Modelled on axlearn's common/utils_test.py (`test_strict_constraint_crashes_on_manual_axis`): a
body over `axis_names={"data"}` constrains its block with `P("data", "model")`. JAX 0.10.2 rejects
it because the spec names a Manual axis ("can only refer to Auto axes of the mesh ...
axis_types=(Manual, Auto)"), whatever the block's shape: the block's 1 row over the 4-way
`data` axis is not the reason, and shardls reports no SH001 for it. The same constraint without
the Manual axis is accepted.
"""

from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))


@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=P("data"), out_specs=P("data"), check_vma=False, axis_names={"data"})
def strict(x):
    return jax.lax.with_sharding_constraint(x, P("data", "model"))  # expect-error: SH014


@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=P("data"), out_specs=P("data"), check_vma=False, axis_names={"data"})
def relaxed(y):
    return jax.lax.with_sharding_constraint(y, P(None, "model"))


strict(jnp.ones((4, 2)))
kept = relaxed(jnp.ones((4, 2)))
