"""r25: a NamedSharding built on its own has the shape of the arrays it meets (issue #12).

`sharding = NamedSharding(mesh, P(...))` has no array of its own; its site takes the global and
per-device shape of the placements that use it when they agree on one, and lists them.
Modelled on maxtext tests/post_training/unit/distillation_metrics_test.py:314 (one sharding, two
device_puts of the same shape), tests/integration/diloco_test.py:172 (two shapes: no shape of its
own), optimizers/muon_sharding_test.py:114 (random arrays put on it), tunix
tests/generate/utils_test.py:1920 (replicated and sharded side by side), flax
tests/nnx/transforms_test.py:702 (a helper `sharding(*args)` returning NamedSharding(mesh,
P(*args)), one sharding per call), and jit shardings, make_array_from_callback and
ShapeDtypeStruct placing with a sharding built above.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("data", "model"))

sharding = NamedSharding(mesh, P("data"))  # expect-uses: losses, masks
losses = jax.device_put(jnp.ones((4, 2, 4)), sharding)  # expect: losses
masks = jax.device_put(jnp.zeros((4, 2, 4), jnp.float32), sharding)  # expect: masks

diloco = NamedSharding(mesh, P(None, "model"))  # expect-uses: inputs, labels
inputs = jax.device_put(jnp.ones((2, 2, 2)), diloco)  # expect: inputs
labels = jax.device_put(jnp.ones((2, 4, 1)), diloco)  # expect: labels

key_w, key_g = jax.random.split(jax.random.key(42))
muon = NamedSharding(mesh, P(None, "data", "model"))  # expect-uses: w, g
w = jax.device_put(jax.random.normal(key_w, (4, 8, 16)), muon)  # expect: w
g = jax.device_put(jax.random.normal(key_g, (4, 8, 16)), muon)  # expect: g

replicated = NamedSharding(mesh, P())  # expect-uses: src_wi_0
sharded = NamedSharding(mesh, P(None, "model"))  # expect-uses: dst_wi_0
src_wi_0 = jax.device_put(jnp.ones((3, 4)), replicated)  # expect: src_wi_0
dst_wi_0 = jax.device_put(jnp.zeros((3, 8), dtype=jnp.float32), sharded)  # expect: dst_wi_0


def sharding_of(*args):
    return NamedSharding(mesh, P(*args))  # expect-uses: kernel, bias


kernel = jax.device_put(jnp.ones((16, 32)), sharding_of("data", "model"))  # expect: kernel
bias = jax.device_put(jnp.ones((32,)), sharding_of("model"))  # expect: bias

batch = NamedSharding(mesh, P("data", None))  # expect-uses: doubled, host_made, abstract


def double(x):
    return x * 2


step = jax.jit(double, out_shardings=batch)
doubled = step(jnp.ones((8, 6)))  # expect: doubled
table = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
host_made = jax.make_array_from_callback((8, 6), batch, lambda index: table[index])  # expect: host_made
abstract = jax.ShapeDtypeStruct((8, 6), jnp.float32, sharding=batch)  # expect: abstract
