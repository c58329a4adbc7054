"""Real code (jax-llm-examples `forward`, each model: `return (logits, all_kvs) if not
is_type(cache, KVCache) else (logits, cache)`, then `decode_step`'s `next_logits, cache =
forward(...)` and `next_tokens = jnp.argmax(next_logits, -1)`): a function whose result is one of
two tuples, which way not known where it is called, unpacked into names.

Unpacking the choice as a whole gave nothing, so the logits, the same in both tuples, were
unknown below. Each option is unpacked now (the targets of one unpacking are never combined from
two options: tests/analysis/test_unpacked_choices.py).
"""

import dataclasses

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("x", "y"))


@dataclasses.dataclass
class KVCache:
    k: jax.Array
    iter: int


def is_type(x, cls):
    return type(x).__name__ == cls.__name__


def forward(tokens, weights, cache):
    logits = jnp.einsum("bd,dv->bv", tokens, weights)
    kvs = [logits]
    return (logits, kvs) if not is_type(cache, KVCache) else (logits, cache)


def decode_step(tokens, weights, cache):
    next_logits, cache = forward(tokens, weights, cache)
    next_logits = jax.device_put(next_logits, NamedSharding(mesh, P("x", "y")))  # expect: next_logits
    return jnp.argmax(next_logits, -1), cache


cache = dataclasses.replace(KVCache(jnp.zeros((8, 16)), 0), iter=1)
next_tokens, cache = decode_step(jnp.ones((8, 32)), jnp.ones((32, 16)), cache)
