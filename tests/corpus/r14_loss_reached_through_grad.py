"""Real code reaches its loss functions only through a transform: maxtext
tests/unit/ulysses_collective_test.py differentiates a loss whose body calls a `shard_map`ped
attention (`jax.grad(ulysses_loss, argnums=(0, 1, 2))(query, key, value)`), training loops
assign `grad_fn = jax.value_and_grad(loss_fn, has_aux=True)` and call it, and layers wrap a
block in `jax.checkpoint(block)(x)` (which returns what the block returns). The body runs with the arguments of those calls, so its
sites get their layouts; `jnp.broadcast_to(ids[None, :], (batch, seq))` has exactly that shape.
"""

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "context"), axis_types=(AxisType.Auto, AxisType.Auto))
batch, heads, seq, head_dim = 2, 4, 16, 8
data_spec = P("data", None, "context", None)


@partial(jax.shard_map, mesh=mesh, in_specs=(data_spec, data_spec, P("data", "context")), out_specs=data_spec)
def attention(query_block, key_block, segment_block):
    scores = query_block * key_block  # expect: query_block, key_block, segment_block
    return scores * segment_block[:, None, :, None]


def ulysses_loss(query, key):
    output = attention(query, key, segment_ids)
    return jnp.sum(output * jnp.cos(output))


def loss_fn(params, x):
    h = jax.lax.with_sharding_constraint(x @ params["w"], NamedSharding(mesh, P("data", None)))  # expect: h
    return jnp.mean(h**2), h


def block(x):
    return jnp.tanh(x) * 2


values = np.arange(batch * heads * seq * head_dim, dtype=np.float32)
query = jnp.asarray(values.reshape(batch, heads, seq, head_dim) / 100.0)
key = query + 1.0
segment_ids = jnp.broadcast_to(jnp.asarray([1] * 10 + [2] * 6, dtype=jnp.int32)[None, :], (batch, seq))
dq, dk = jax.grad(ulysses_loss, argnums=(0, 1))(query, key)

params = {"w": jnp.ones((16, 32))}
grad_fn = jax.value_and_grad(loss_fn, has_aux=True)
(loss, hidden), grads = grad_fn(params, jnp.ones((8, 16)))
placed_grad = jax.device_put(grads["w"], NamedSharding(mesh, P("context", "data")))  # expect: placed_grad

rows = jax.device_put(
    jax.checkpoint(block)(jnp.ones((4, 8))), NamedSharding(mesh, P(None, "context"))
)  # expect: rows
