"""Real code (jax-llm-examples MoE `_expert_fn`: `(b, s, d), e = x.shape, cfg.moe_experts_per_tok`;
`decode_ragged_dot`: `(n, k), (g, _, m) = lhs.shape, rhs.shape`): a shape unpacked inside the
unpacking of a tuple written out. Python raises unless each shape has as many sizes as its
targets, so below it each array has that rank, its sizes named after the targets, even when the
caller's array is not known (tests/analysis/test_fixed_rank.py). Called here with known arrays,
every site keeps the shape JAX gives it.
"""

from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))
experts_per_token = 2


@partial(jax.shard_map, mesh=mesh, in_specs=(P("x", None, None),), out_specs=P("x", None, None))
def expert_fn(tokens):
    (b, s, d), e = tokens.shape, experts_per_token
    flat = tokens.reshape((b * s, d))
    return jnp.repeat(flat, e, axis=0)[: b * s].reshape((b, s, d))  # expect: tokens


routed = expert_fn(jnp.ones((4, 6, 8)))  # expect: routed


def ragged(lhs, rhs):
    (n, k), (g, _, m) = lhs.shape, rhs.shape
    lhs = jax.device_put(lhs, NamedSharding(mesh, P("x", None)))  # expect: lhs
    rhs = jax.device_put(rhs, NamedSharding(mesh, P("y", None, None)))  # expect: rhs
    return n * m + g * k


total = ragged(jnp.ones((8, 16)), jnp.ones((4, 16, 32)))
