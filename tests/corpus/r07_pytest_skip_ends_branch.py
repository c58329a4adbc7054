"""Real code (MaxText tests/unit/sharding_test.py): `pytest.skip` ends the branch it is in.

The test needs exactly 4 devices and skips otherwise, so with 8 devices nothing after the skip
runs (and with 4 the mesh is right): no SH105 on the `create_device_mesh` line.
"""
import contextlib

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import mesh_utils
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


def test_fsdp_sharding():
    if jax.device_count() != 4:
        pytest.skip("FSDP sharding test requires exactly 4 devices")
    ici_parallelism = [1, 4, 1]
    devices_array = mesh_utils.create_device_mesh(ici_parallelism)
    return Mesh(devices_array, ["data", "fsdp", "tensor"])


with contextlib.suppress(pytest.skip.Exception):
    test_fsdp_sharding()

mesh = jax.make_mesh((2, 4), ("data", "fsdp"))
control = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P("data", "fsdp")))  # expect: control
