"""Real code (axlearn `input_grain_tpu_test.py`, `utils_test.py`): the device array reshaped to
`(batch_sharding, -1)` with `batch_sharding` computed from `jax.process_count()`. One size is
unknown and the other is numpy's -1: the mesh's sizes are not known, and there is nothing to
report. shardls used to read the unknown size as a second -1 and report SH109. A known size
beside the -1 still fills it from the devices (`rows`).
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def batches_on_half_the_processes():
    logical_batch_size = max(1, jax.process_count() // 2)
    batch_sharding = max(1, logical_batch_size // 2)
    with jax.sharding.Mesh(np.array(jax.devices()).reshape(batch_sharding, -1), ("x", "y")) as mesh:
        return jax.device_put(jnp.zeros((4, 16)), NamedSharding(mesh, P("x", "y")))


def every_other_process(divisor):
    global_logical_shape = (jax.process_count() // divisor, 1)
    devices = np.array(jax.devices()).reshape(global_logical_shape[0], -1)
    return jax.sharding.Mesh(devices, ("x", "y"))


batches = batches_on_half_the_processes()
mesh = every_other_process(1)

known = jax.sharding.Mesh(np.array(jax.devices()).reshape(2, -1), ("x", "y"))
rows = jax.device_put(jnp.zeros((4, 16)), NamedSharding(known, P("x", "y")))  # expect: rows
