"""Real code (MaxText tests/unit/maxtext_utils_test.py): a mesh whose axis names come from `self`.

`Mesh(devices, self.mesh_axes)` in a test method, with `self.mesh_axes` set in `setUp`: if the
analysis cannot evaluate it, the layout is unknown; the other mesh of `setUp` (`self.mesh`) must
not stand in for it and produce SH005/SH001 errors.
"""
import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec


class TestSufficientlySharded(unittest.TestCase):
    def setUp(self):
        devices = np.array(jax.devices()[:4]).reshape((2, 2))
        self.mesh = Mesh(devices, ("fsdp", "tensor"))
        self.mesh_axes = ("fsdp", "sequence", "tensor", "stage", "context")

    def test_two_axes(self):
        placed = jax.device_put(jnp.ones((8, 8)), NamedSharding(self.mesh, PartitionSpec("fsdp", "tensor")))  # expect: placed
        return placed

    def test_five_axes(self):
        devices = np.array(jax.devices()).reshape((jax.device_count(), 1, 1, 1, 1))
        mesh = Mesh(devices, self.mesh_axes)
        pspec = PartitionSpec(("fsdp", "sequence"), "stage", "tensor", None)
        return jax.device_put(jnp.ones((8, 8, 2, 2)), NamedSharding(mesh, pspec))


case = TestSufficientlySharded()
case.setUp()
two = case.test_two_axes()
five = case.test_five_axes()
