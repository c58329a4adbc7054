"""r66: guards on the device count made of several tests, and a mesh made current in a branch.

Modelled on axlearn's common/gradient_accumulation_test.py:111 and array_serialization_test.py:86
(`if jax.device_count() != 8 or jax.process_count() != 1: self.skipTest(...)`), jax's
tests/ragged_collective_test.py (`if num_devices not in (4, 8): raise SkipTest(...)`) and
tunix's notebooks (`with jax.set_mesh(mesh):` inside a branch per machine). With the 8 devices
the runner states, JAX and shardls run every test below on 8. With the count only assumed
(tests/analysis/test_compound_guards.py), the first test runs on 8 known from its guard, the
second once on 4 and once on 8, and the branch's `with` meets the branch's count.
"""

import sys
import unittest

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P


class CompoundGuardTest(unittest.TestCase):
    def test_exactly_eight_on_one_process(self):
        if jax.device_count() != 8 or jax.process_count() != 1:
            self.skipTest("Incorrect device & process count for mesh.")
        mesh = jax.make_mesh((jax.device_count() // 2, 2), ("data", "model"))
        params = jax.device_put(jnp.zeros((16, 6)), NamedSharding(mesh, P("data", "model")))  # expect: params
        self.assertEqual(params.shape, (16, 6))

    def test_four_or_eight(self):
        num_devices = jax.device_count()
        if num_devices not in (4, 8):
            raise unittest.SkipTest("test requires 4 or 8 devices")
        ring = jax.make_mesh((num_devices,), ("x",))
        tokens = jax.device_put(jnp.zeros((num_devices * 3, 4)), NamedSharding(ring, P("x")))  # expect: tokens
        self.assertEqual(tokens.shape[0], num_devices * 3)


if jax.device_count() == 8:
    grid = jax.make_mesh((jax.device_count(),), ("batch",), axis_types=(AxisType.Auto,))
    with jax.set_mesh(grid):
        batch = jax.device_put(jnp.zeros((24, 2)), P("batch"))  # expect: batch


result = unittest.TextTestRunner(stream=sys.stderr).run(
    unittest.defaultTestLoader.loadTestsFromTestCase(CompoundGuardTest)
)
assert result.wasSuccessful()
