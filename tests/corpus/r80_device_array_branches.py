"""Real code (vmoe `vmoe/data/pjit_utils_test.py`): the device array is shaped in the branch the
machine takes.

With the 8 devices the runner states, JAX and shardls take the `> 1` branch: 8 devices, shuffled,
cut to an even number and reshaped to (4, 2). With the count only assumed
(tests/analysis/test_device_branches.py reads this file so), the `else` branch states that there is
one device, so its `reshape((1, 1))` meets one device, not 8 (it was an SH105 "cannot reshape 8
devices into shape (1, 1)" on the mesh: the reshape was computed where the name is bound, with the
assumed count, before any reader could narrow it).
"""
import jax
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

devices = np.asarray(jax.local_devices())
if devices.size > 1:
    np.random.default_rng(0).shuffle(devices)
    devices = devices[: devices.size - devices.size % 2]
    devices = devices.reshape((-1, 2))
else:
    devices = devices.reshape((1, 1))
mesh = jax.sharding.Mesh(devices, ("a", "b"))
x = jax.device_put(np.zeros((256, 32)), NamedSharding(mesh, P(("a", "b"))))  # expect: x

grid = np.array(jax.devices())
if len(grid) == 1:
    grid = grid.reshape((1, 1))
else:
    grid = grid.reshape((2, -1))
grid_mesh = jax.sharding.Mesh(grid, ("data", "model"))
y = jax.device_put(np.zeros((8, 16)), NamedSharding(grid_mesh, P("data", "model")))  # expect: y
