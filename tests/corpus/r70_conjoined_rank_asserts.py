"""Real code (jax-llm-examples llama3/qwen3/gemma4/gpt_oss `apply_rotary_embedding`: `assert
x.ndim == 4 and sin.ndim == 3 and cos.ndim == 3`; the MoE `_moe_gmm`: `assert lhs.ndim == 2 and
rhs.ndim == 3, ...`; `ragged_attention.py`: `assert starts.ndim == 1 and starts.size == bs`):
one assert fixes the rank of several arrays at once. Below it each holds (an `and` raises unless
every operand is true), so a placement of any of them has that rank even when the caller's
array is not known (tests/analysis/test_fixed_rank.py). Called here with known arrays, every
site keeps the shape JAX gives it.
"""

from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Explicit))
auto = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))


def apply_rotary_embedding(x, sin, cos):
    assert x.ndim == 4 and sin.ndim == 3 and cos.ndim == 3
    x = jax.sharding.reshard(x, NamedSharding(mesh, P("x", "y")))  # expect: x
    sin = jax.sharding.reshard(sin, NamedSharding(mesh, P("x")))  # expect: sin
    x1, x2 = jnp.split(x, 2, axis=-1)
    sin, cos = sin[:, None, :, :], cos[:, None, :, :]
    return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


rotated = apply_rotary_embedding(jnp.ones((4, 8, 6, 16)), jnp.ones((4, 6, 8)), jnp.ones((4, 6, 8)))


def moe_gmm(lhs, rhs, group_sizes):
    assert lhs.ndim == 2 and rhs.ndim == 3, f"{lhs.ndim=} != 2 and {rhs.ndim=} != 3"
    group_sizes = group_sizes.astype(jnp.int32)

    @partial(jax.shard_map, mesh=auto, in_specs=(P("x", None), P("y", None, None)), out_specs=P("x", "y"))
    def experts(tokens, weights):
        return tokens @ weights[0]  # expect: tokens, weights

    return experts(lhs, rhs)


out = moe_gmm(jnp.ones((8, 16)), jnp.ones((4, 16, 16)), jnp.array([2, 2, 2, 2]))


def ragged_decode(starts, lengths, bs):
    assert starts.ndim == 1 and starts.size == bs
    assert lengths.ndim == 1 and lengths.size == bs
    starts = jax.sharding.reshard(starts, NamedSharding(mesh, P("x")))  # expect: starts
    lengths = jax.sharding.reshard(lengths, NamedSharding(mesh, P(None)))  # expect: lengths
    return starts + lengths


decoded = ragged_decode(jnp.zeros((8,), dtype=jnp.int32), jnp.ones((8,), dtype=jnp.int32), 8)
