"""Real code (flax tests/nnx/spmd_test.py, bridge/wrappers_test.py): a test checks a layout by
comparing shardings, `assert model.kernel.sharding.is_equivalent_to(NamedSharding(mesh, P('row',
'col')), ndim=2)`. The `NamedSharding` built there places no array; JAX compares it as laid on an
array of rank `ndim`, so its site has that rank, sizes not known (`d0/2`, `d1/4` per device:
tests/analysis/test_equivalent_rank.py). Nothing here is an error: JAX raises nowhere.
"""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("row", "col"), axis_types=(AxisType.Auto, AxisType.Auto))

with jax.set_mesh(mesh):
    model = nnx.Linear(  # expect: model
        4,
        8,
        rngs=nnx.Rngs(0),
        kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), ("row", "col")),
    )

kernel = jax.device_put(jnp.ones((4, 8)), NamedSharding(mesh, P("row", "col")))  # expect: kernel
assert kernel.sharding.is_equivalent_to(NamedSharding(mesh, P("row", "col")), ndim=2)
assert not kernel.sharding.is_equivalent_to(NamedSharding(mesh, P()), ndim=2)
assert model.kernel.sharding.is_equivalent_to(NamedSharding(mesh, P("row", "col")), ndim=2)
assert model.bias.sharding.is_equivalent_to(
    jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec()),
    ndim=1,
)
