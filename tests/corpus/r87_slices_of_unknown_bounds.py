"""Real code (jax-llm-examples llama3/main.py: `curr_tokens = next_tokens.at[:, cache.iter - 1 :
cache.iter].get(out_sharding=P(None, None))`): a slice whose bounds shardls cannot know (a run's
value) still keeps its axis, so the result has the array's rank, that dimension's size not known.

The result had no shape at all, so a spec longer than the rank went unreported. Here the bound
comes from the environment (not known to shardls): JAX raises on `rows`, three entries for a
rank-2 array, and the rank is known from the code alone, so it is an error. (JAX accepts a
longer spec as `.at[...].get`'s `out_sharding`, and so does shardls.) The untagged sites' sizes
are symbolic here, JAX's numbers: tests/analysis/test_unknown_slice_bounds.py checks them.
"""

import os

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("x", "y"))
stop = int(os.environ.get("SHARDLS_CORPUS_STOP", "3"))
tokens = jax.device_put(jnp.zeros((8, 16), jnp.int32), NamedSharding(mesh, P(None, "y")))  # expect: tokens

rows = jax.device_put(tokens[1:stop], NamedSharding(mesh, P("x", None, None)))  # expect-error: SH002
window = tokens.at[0:stop, :].get(out_sharding=NamedSharding(mesh, P(None, "y")))
kept = jax.device_put(tokens[0:stop], NamedSharding(mesh, P(None, "y")))
