"""Real code (jax-llm-examples gemma4 and gpt_oss `sample_top`): a nested `sample_multinomial`
run only as a branch of `jax.lax.cond(temp > 1e-3, sample_multinomial, partial(jnp.argmax,
axis=-1), logits)`; its body constrains the logits and hands them to a `shard_map`ped `sample`,
and the caller places the tokens the `cond` returns.

The branch was walked with unknown parameters and the `cond`'s value was unknown. JAX traces each
branch with the operands and requires them all to return the same types, so the body runs with
the logits bound and the `cond` gives what any branch gives (in gemma4 only the `argmax` partial's
value has a known rank: the temperature's is not known). A `lax.switch` over a list of branches
is the same (tests/analysis/test_cond_branches.py, which also checks `scaled`: the oracle reads a
traced value as a `shard_map` block, and inside the `cond` branch it is the whole array).
"""

from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("x", "y"))
shard_vocab = P("x", None, "y")


def sample_top(key, logits, temp):
    def sample_multinomial(logits):
        scaled = jax.sharding.reshard(logits / temp, NamedSharding(mesh, shard_vocab))

        def sample(key, block):
            idx = jax.lax.axis_index("y")
            top = jnp.argmax(block, axis=-1) + block.shape[-1] * idx  # expect: block
            return jax.lax.pmax(top, "y")

        return jax.shard_map(sample, mesh=mesh, in_specs=(P(), shard_vocab), out_specs=P("x", None))(key, scaled)

    return jax.lax.cond(temp > 1e-3, sample_multinomial, partial(jnp.argmax, axis=-1), logits)


def decode_step(key, logits):
    next_tokens = sample_top(key, logits, 0.7)
    placed = jax.device_put(next_tokens, NamedSharding(mesh, P("x", None)))  # expect: placed
    return placed


tokens = decode_step(jax.random.key(0), jnp.ones((8, 4, 32)))
