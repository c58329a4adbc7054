"""How Flax finds the mesh (reference §4.2): `mesh=` metadata, the NamedSharding's mesh, the
`jax.set_mesh` context; none of them (or only the deprecated `with mesh:`) is an error."""

import jax
from flax import nnx
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
other = jax.make_mesh((4, 2), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
init = nnx.initializers.zeros_init()

by_metadata = nnx.Linear(
    16, 32, kernel_init=nnx.with_partitioning(init, ("data", "model"), mesh=other), rngs=nnx.Rngs(0)
)  # expect: by_metadata
by_sharding = nnx.Linear(
    16, 32, kernel_init=nnx.with_partitioning(init, NamedSharding(mesh, P("data", "model"))), rngs=nnx.Rngs(0)
)  # expect: by_sharding
with jax.set_mesh(mesh):
    metadata_wins = nnx.Linear(
        16, 32, kernel_init=nnx.with_partitioning(init, ("data", "model"), mesh=other), rngs=nnx.Rngs(0)
    )  # expect: metadata_wins
    by_context = nnx.Linear(
        16, 32, kernel_init=init, kernel_metadata={"out_sharding": ("model", "data")}, rngs=nnx.Rngs(0)
    )  # expect: by_context
    both = nnx.Linear(
        16,
        32,
        kernel_init=nnx.with_partitioning(init, NamedSharding(other, P("data")), mesh=other),
        rngs=nnx.Rngs(0),
    )  # expect: both
    differ = nnx.Linear(
        16,
        32,
        kernel_init=nnx.with_partitioning(init, NamedSharding(mesh, P("data")), mesh=other),
        rngs=nnx.Rngs(0),
    )  # expect-error: SH212
no_mesh = nnx.Linear(
    16, 32, kernel_init=nnx.with_partitioning(init, ("data", "model")), rngs=nnx.Rngs(0)
)  # expect-error: SH201
with mesh:  # expect-warning: SH203
    legacy = nnx.Linear(
        16, 32, kernel_init=nnx.with_partitioning(init, ("data", "model")), rngs=nnx.Rngs(0)
    )  # expect-error: SH201
lazy = nnx.Linear(
    16,
    32,
    kernel_init=init,
    kernel_metadata={"out_sharding": ("data", "model"), "mesh": mesh, "eager_sharding": False},
    rngs=nnx.Rngs(0),
)
state = nnx.state(lazy)
nnx.update(lazy, jax.device_put(state, nnx.get_named_sharding(state, mesh)))  # expect: lazy
