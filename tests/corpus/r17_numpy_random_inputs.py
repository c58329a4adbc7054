"""Real tests build their inputs with numpy's samplers before placing them (maxtext
tests/post_training/unit/distillation_metrics_test.py: `rng = np.random.default_rng(7)`,
`jnp.asarray(rng.normal(size=(b, s, v)).astype(np.float32))`; `np.random.randn(...)`,
`np.random.uniform(size=...)`, `rng.integers(0, n, size=...)`). The array has `size`'s shape.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:4]), ("data",))
rng = np.random.default_rng(7)
batch_size, seq_len, vocab_size = 4, 4, 8
s_logits = jnp.asarray(rng.normal(size=(batch_size, seq_len, vocab_size)).astype(np.float32))
sharding = NamedSharding(mesh, P("data"))
s_sharded = jax.device_put(s_logits, sharding)  # expect: s_sharded
noise = jax.device_put(np.random.randn(8, 2), sharding)  # expect: noise
labels = jax.device_put(rng.integers(0, vocab_size, size=(8,)), sharding)  # expect: labels
weights = jax.device_put(
    np.random.uniform(size=(2, 8)), NamedSharding(mesh, P(None, "data"))
)  # expect: weights
