"""r48: batches a generator yields, sampled by index (issue #12 §2).

A loop over a generator's call binds what its `yield` gives with the call's arguments (how many
items it yields stays unknown), so the batch a training loop places has the shape the generator
builds. Modelled on flax examples/nnx_toy_examples/04_data_parallel_with_jit.py (`def dataset(
steps, batch_size): ... yield x, y` over `np.random.uniform(size=(batch_size, 1))`, then `for
step, (x, y) in enumerate(dataset(1000, 16)): x, y = jax.device_put((x, y), data_sharding)`) and
10_fsdp_and_optimizer.py (`X = np.linspace(-2, 2, 100)[:, None]`, a batch `X[idx]` sampled with
`idx = np.random.choice(len(X), size=batch_size)`, placed with a helper's NamedSharding).
"""

import jax
import numpy as np
from jax.experimental import mesh_utils
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.sharding.Mesh(mesh_utils.create_device_mesh((2, 4)), ("data", "model"))
data_sharding = NamedSharding(mesh, P("data"))


def named_sharding(*names):
    return NamedSharding(mesh, P(*names))


def dataset(steps, batch_size):
    for _ in range(steps):
        x = np.random.uniform(-2, 2, size=(batch_size, 1))
        y = 0.8 * x**2 + 0.1 + np.random.normal(0, 0.1, size=x.shape)
        yield x, y


for step, (x, y) in enumerate(dataset(3, 16)):
    xs, ys = jax.device_put((x, y), data_sharding)  # expect: xs, ys


X = np.linspace(-2, 2, 100)[:, None]
Y = 0.8 * X**2 + 0.1 + np.random.normal(0, 0.1, size=X.shape)


def sampled(batch_size, num_steps):
    for _ in range(num_steps):
        idx = np.random.choice(len(X), size=batch_size)
        yield X[idx], Y[idx]


for x_batch, y_batch in sampled(batch_size=32, num_steps=2):
    placed_x, placed_y = jax.device_put((x_batch, y_batch), named_sharding("data"))  # expect: placed_x, placed_y

for x_batch, y_batch in sampled(batch_size=32, num_steps=2):
    # The batch's trailing dimension has size 1, which the 4-way `model` axis cannot split.
    xb, yb = jax.device_put((x_batch, y_batch), named_sharding("data", "model"))  # expect-error: SH001
