"""Real code (tunix models/qwen2/model.py `Attention.__call__`, jax-llm-examples nemotron3
`prefill`): a projection whose result the code then unpacks, `_, _, kh, _ = key_proj.shape`,
possibly after a cache update under an `if`; a transpose of the four axes before a `shard_map`;
and a prompt padded with a pair per dimension (`jnp.pad(chunk, [(0, 0), (0, n)])`) after
`if chunk.ndim == 1: chunk = chunk[None, :]`, then `assert prompt.ndim == 2`. Called here with
known arrays, every site gets JAX's shape; where the arrays are not known, the unpacking, the
transpose, the update's start indices and the pad's pairs still give the rank
(tests/analysis/test_fixed_rank.py, test_array_moves.py).
"""

from functools import partial

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("fsdp", "tp"), axis_types=(AxisType.Auto, AxisType.Auto))
explicit = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Explicit))


def attention(x, wk, cache):
    key_proj = jnp.einsum("btd,dnh->btnh", x, wk)
    if cache is not None:
        key_proj = jax.lax.dynamic_update_slice(cache, key_proj, (0, 0, 0, 0))
    _, _, kh, _ = key_proj.shape
    key_proj = key_proj.transpose(0, 2, 1, 3)

    @partial(jax.shard_map, mesh=mesh, in_specs=(P("fsdp", "tp", None, None),), out_specs=P("fsdp", "tp"))
    def sharded(k_block):
        return k_block.sum(axis=(2, 3)) * 2  # expect: k_block

    scores = sharded(key_proj)  # expect: scores
    return scores


fresh = attention(jnp.ones((4, 8, 16)), jnp.ones((16, 4, 8)), None)
cached = attention(jnp.ones((4, 8, 16)), jnp.ones((16, 4, 8)), jnp.zeros((4, 12, 4, 8)))


def prepare_chunk(chunk, pad_to, pad_id=0):
    if chunk.ndim == 1:
        chunk = chunk[None, :]
    chunk = jnp.pad(chunk, [(0, 0), (0, pad_to - chunk.shape[-1])], constant_values=pad_id)
    segment_ids = jnp.where(chunk != pad_id, 1, 0).astype(jnp.int32)
    return chunk, segment_ids


def prefill(tokens):
    prompt, prompt_segment_ids = prepare_chunk(tokens, pad_to=16)
    assert prompt.ndim == 2
    prompt = jax.sharding.reshard(prompt, NamedSharding(explicit, P("x", None)))  # expect: prompt
    segments = jax.sharding.reshard(prompt_segment_ids, NamedSharding(explicit, P(None, "y")))  # expect: segments
    return prompt, segments


batch = prefill(jnp.ones((4, 12), dtype=jnp.int32))
one, one_segments = prepare_chunk(jnp.ones((10,), dtype=jnp.int32), pad_to=16)
single = jax.sharding.reshard(one, NamedSharding(explicit, P(None, "y")))  # expect: single
