"""Real code (JAX-Toolbox `nsys_jax/tests/overlap_program.py`): a global array assembled from one
block per device, then fed to a `shard_map` on the same mesh.

`jax.make_array_from_single_device_arrays(shape, sharding, arrays)` was not modelled: the array
had no shape, so the `shard_map` block and its result were unknown. JAX checks each block against
`sharding.shard_shape(shape)`, which rejects a dimension the mesh does not divide first.
"""
from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

num_devices = 2
devices = jax.local_devices()[:num_devices]
mesh = Mesh(devices, axis_names=("i",))
f32_per_device = 64


def device_put_local(x: jax.Array) -> list[jax.Array]:
    return [jax.device_put(x, d) for d in devices]


blocks = jax.make_array_from_single_device_arrays(  # expect: blocks
    (num_devices, f32_per_device),
    NamedSharding(mesh, P("i")),
    device_put_local(jnp.zeros((1, f32_per_device), dtype=jnp.float32)),
)


@partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
def overlap(block):
    a = block.T @ block  # expect: block
    return jax.lax.psum(a, "i") @ (a @ a.T)


out = overlap(blocks)  # expect: out

uneven = jax.make_array_from_single_device_arrays(  # expect-error: SH001
    (3, f32_per_device),
    NamedSharding(mesh, P("i")),
    device_put_local(jnp.zeros((1, f32_per_device), dtype=jnp.float32)),
)
