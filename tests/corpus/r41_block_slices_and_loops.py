"""Real `shard_map` bodies slice, update and loop over their blocks: maxtext
tests/unit/usp_collective_test.py keeps each device's ring chunk with
`jax.lax.dynamic_slice_in_dim(output, jax.lax.axis_index(ring_axis) * chunk, chunk, axis=2)`,
maxtext examples/shmap_collective_matmul.py accumulates into `jnp.zeros(...)` with
`jax.lax.dynamic_update_slice` inside `jax.lax.fori_loop`, and code flattens, transposes and
pads its blocks (`x.ravel()`, `x.swapaxes(1, 2)`, `jnp.pad`). Each output's global shape follows
from the block the body returns.
"""

from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("fsdp", "context"), axis_types=(AxisType.Auto, AxisType.Auto))
data_spec = P("fsdp", None, "context", None)


@partial(jax.shard_map, mesh=mesh, in_specs=data_spec, out_specs=data_spec, check_vma=False)
def ring_chunk(output_block):
    full = jax.lax.all_gather(output_block, "context", axis=2, tiled=True)
    chunk = full.shape[2] // 4
    return jax.lax.dynamic_slice_in_dim(full, jax.lax.axis_index("context") * chunk, chunk, axis=2)


@partial(
    jax.shard_map, mesh=mesh, in_specs=P("fsdp", "context", None), out_specs=P("fsdp", "context", None), check_vma=False
)
def accumulate(activations):
    accum = jnp.zeros((activations.shape[0], activations.shape[1] * 2, activations.shape[2]))

    def step(i, carry):
        return jax.lax.dynamic_update_slice(carry, activations, (0, i * activations.shape[1], 0))

    return jax.lax.fori_loop(0, 2, step, accum)


chunked = ring_chunk(jnp.ones((4, 2, 32, 8)))  # expect: chunked
accumulated = accumulate(jnp.ones((4, 16, 8)))  # expect: accumulated

x = jnp.ones((4, 8, 16))
flat = jax.device_put(x.ravel(), NamedSharding(mesh, P("context")))  # expect: flat
swapped = jax.device_put(x.swapaxes(1, 2), NamedSharding(mesh, P("fsdp", "context")))  # expect: swapped
moved = jax.device_put(x.transpose(2, 0, 1), NamedSharding(mesh, P("context", "fsdp")))  # expect: moved
padded = jax.device_put(jnp.pad(x, [(0, 0), (0, 0), (0, 8)]), NamedSharding(mesh, P(None, None, "context")))  # expect: padded
window = jax.device_put(jax.lax.slice_in_dim(x, 4, 12, axis=2), NamedSharding(mesh, P("fsdp", None, "context")))  # expect: window
counted = jax.device_put(jax.lax.fori_loop(0, 3, lambda i, c: c + 1, 0), NamedSharding(mesh, P()))  # expect: counted
ones = jax.device_put(jnp.ones(len(jax.devices())), NamedSharding(mesh, P(("fsdp", "context"))))  # expect: ones
