"""r62: statements written inside branches on the device count, and after guards that exit.

Modelled on maxtext's tests/unit/sharding_test.py (`if jax.device_count() != 4: pytest.skip(...)`
at the top of a test), flax's tests/nnx/spmd_test.py (`if jax.device_count() < 4:
self.skipTest(...)`) and tunix's notebooks (a branch per machine). With the 8 devices the runner
states, JAX and shardls run the `== 8` branch and the code after the guards. With the count only
assumed (tests/analysis/test_device_guards.py reads this file so), both branches of each `if` on
the count run, each where the count is what its test says: the `== 1` body places on its one
device (no "uses only 1 of 8"), the `>= 16` body reports nothing resting on the count, and the
code after `!= 8: raise` runs where there are 8 devices, known from the test.
"""

import sys
import unittest

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

if jax.device_count() == 8:
    mesh = jax.make_mesh((2, 4), ("data", "model"))
    inside = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P("data", "model")))  # expect: inside
elif jax.device_count() == 1:
    single = jax.make_mesh((1, 1), ("data", "model"))
    alone = jax.device_put(jnp.zeros((3, 5)), NamedSharding(single, P("data", "model")))
if jax.device_count() >= 16:
    wide = jax.make_mesh((16,), ("data",))
    spread = jax.device_put(jnp.zeros((16, 4)), NamedSharding(wide, P("data")))


def exactly_eight():
    if jax.device_count() != 8:
        raise ValueError("needs exactly 8 devices")
    grid = jax.make_mesh((4, 2), ("data", "model"))
    guarded = jax.device_put(jnp.zeros((4, 6)), NamedSharding(grid, P("data", "model")))  # expect: guarded
    return guarded


exactly_eight()


class GuardedTest(unittest.TestCase):
    def test_at_least_two(self):
        if len(jax.devices()) < 2:
            self.skipTest("needs two devices")
        pair = jax.make_mesh((jax.device_count(),), ("data",))
        skipped_past = jax.device_put(jnp.zeros((8, 2)), NamedSharding(pair, P("data")))  # expect: skipped_past
        self.assertEqual(skipped_past.shape, (8, 2))

    def test_sixteen(self):
        if jax.device_count() < 16:
            return
        sixteen = jax.make_mesh((16,), ("data",))
        far = jax.device_put(jnp.zeros((32, 2)), NamedSharding(sixteen, P("data")))
        self.assertEqual(far.shape, (32, 2))


result = unittest.TextTestRunner(stream=sys.stderr).run(
    unittest.defaultTestLoader.loadTestsFromTestCase(GuardedTest)
)
assert result.wasSuccessful()
