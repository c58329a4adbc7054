"""Real code (orbax `safetensors_layout_multiprocess_test.py`): tests that check that JAX rejects
a layout, inside `with self.assertRaisesRegex(ValueError, ...)` or `pytest.raises`. The error is
the test's intent: shardls reports it as an info naming the block, never as an error, and
JAX's run shows that each block indeed raises (the test passes).
"""

import unittest

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(8, 1), ("data", "model"))

with pytest.raises(ValueError, match="partitioned 8 times"):
    jax.device_put(jnp.zeros((4, 4, 4)), NamedSharding(mesh, P("data", None, None)))


class ShardingTest(unittest.TestCase):
    def test_scalar(self):
        with self.assertRaisesRegex(ValueError, "For scalars the PartitionSpec should be P()"):
            jax.device_put(np.float32(1.0), NamedSharding(mesh, P("data")))

    def test_unknown_axis(self):
        with self.assertRaises(ValueError):
            NamedSharding(mesh, P("data", "model", "d3"))


result = unittest.TextTestRunner().run(unittest.defaultTestLoader.loadTestsFromTestCase(ShardingTest))
assert result.wasSuccessful()

x = jax.device_put(jnp.zeros((3, 4)), NamedSharding(mesh, P("data")))  # expect-error: SH001
