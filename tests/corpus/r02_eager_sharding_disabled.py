"""Real code (MaxText tests/unit/maxtext_utils_nnx_test.py): `nnx.use_eager_sharding(False)`.

With eager sharding off Flax keeps `out_sharding` as metadata only: it may be longer than the
rank and name logical axes no mesh has. No error may come from the `nnx.Param` below.
"""
import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((8,), ("data",))


def make_scanned_param(shape, out_sharding, partition_name):
    with nnx.use_eager_sharding(False):
        return nnx.Param(jnp.zeros(shape), out_sharding=out_sharding, **{nnx.PARTITION_NAME: partition_name})


with jax.set_mesh(mesh):
    dense = make_scanned_param((4, 8), ("embed", "dense_layers", "mlp"), "dense_layers")
    moe = make_scanned_param((4, 8), ("embed", "moe_layers", "mlp"), "moe_layers")
    eager = nnx.Param(jnp.zeros((16, 4)), out_sharding=("data", None))  # expect: eager
