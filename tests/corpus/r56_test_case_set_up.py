"""r56: a test method runs on the instance `setUp` prepared (issue #12).

Modelled on maxtext's tests/unit/checkpointing_test.py: `setUp` keeps a mesh and a sharding on
`self`, and a test method places a `ShapeDtypeStruct` with `sharding=self.sharding_rank3`. No
code calls a test method (the test runner does, on an instance of the class after `setUp`), so
`self` was unknown and the struct had no site; the sharding built in `setUp` met no use.
"""

import sys
import unittest

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


class ShardingTest(unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
        self.rows = NamedSharding(self.mesh, P("data", None))  # expect-uses: batch

    def _place(self, x):
        placed = jax.device_put(x, NamedSharding(self.mesh, P(None, "model")))  # expect: placed
        return placed

    def test_struct(self):
        target = jax.ShapeDtypeStruct(
            (2, 8, 4), jnp.float32, sharding=NamedSharding(self.mesh, P(None, "data"))
        )  # expect: target
        self.assertEqual(target.shape, (2, 8, 4))

    def test_placed(self):
        batch = jax.device_put(jnp.zeros((8, 6)), self.rows)  # expect: batch
        column = self._place(jnp.ones((3, 4)))
        self.assertEqual(column.shape, (3, 4))
        self.assertEqual(batch.shape, (8, 6))


result = unittest.TextTestRunner(stream=sys.stderr).run(
    unittest.defaultTestLoader.loadTestsFromTestCase(ShardingTest)
)
assert result.wasSuccessful()
