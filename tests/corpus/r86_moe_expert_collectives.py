"""Real code (jax-llm-examples' MoE `_expert_fn`, every model): the routed tokens are put back with
`jax.lax.scatter_add` in prefill and an einsum in decode, the result is `psum`med over the expert
axis whichever branch made it, and reshaped to `(b, s, d)`; the KV cache is updated with
`jax.lax.dynamic_update_slice_in_dim`.

`scatter_add` had no value, and `psum` none of a value that is one of two branches', so the
`shard_map`'s output was unknown even where the body's blocks were known. Here every shape is
known and JAX checks them; tests/analysis/test_rank_only_blocks.py checks the ranks the same
body gives when the mesh or the sizes are not known.
"""

from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("x", "y"))
prefill = len(jax.devices()) >= 0
dims = jax.lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))


@partial(jax.shard_map, mesh=mesh, in_specs=P("x", None, None), out_specs=P("x", None, None))
def expert_fn(tokens):
    b, s, d = tokens.shape
    flat = tokens.reshape((b * s, d))
    if prefill:
        routed = jax.lax.scatter_add(jnp.zeros((b * s, d)), jnp.zeros((3, 1), jnp.int32), flat[:3], dims)
    else:
        routed = jnp.einsum("Td,Td->Td", flat, flat)
    routed = jax.lax.psum(routed, "y")
    return routed.reshape((b, s, routed.shape[-1]))  # expect: tokens


hidden = jax.device_put(jnp.ones((4, 6, 8)), NamedSharding(mesh, P("x")))  # expect: hidden
moe_out = expert_fn(hidden)  # expect: moe_out

cache_k = jax.device_put(jnp.zeros((2, 4, 16, 8)), NamedSharding(mesh, P("x", "y")))  # expect: cache_k
new_k = jax.device_put(jnp.ones((2, 4, 1, 8)), NamedSharding(mesh, P("x", "y")))  # expect: new_k
updated = jax.lax.dynamic_update_slice_in_dim(cache_k, new_k, 3, axis=2)
placed_cache = jax.device_put(updated, NamedSharding(mesh, P("x", "y")))  # expect: placed_cache
