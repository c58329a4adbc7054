"""r55: a method of a plain class runs with `self` the instance the code calls it on (issue #12).

Modelled on maxtext's tests (`self._run_cp_shift(x)` in tests/unit/multi_token_prediction_test.py)
and checkpoint helpers that keep the mesh on an object: `sharder.put(x, spec)` reads
`self.mesh`, which only the instance the call is made on knows. A function's calls bound its
parameters, but a method's did not: the body's `self.mesh` and `x` were unknown, so the
placement had no layout. Each call gives one context, also through another method
(`self.put(...)` in `put_rows`).
"""

import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


class Sharder:
    def __init__(self, mesh):
        self.mesh = mesh

    def put(self, x, spec):
        placed = jax.device_put(x, NamedSharding(self.mesh, spec))  # expect: placed
        return placed

    def put_rows(self, x):
        return self.put(x, P("data", None))


mesh = jax.make_mesh((4, 2), ("data", "model"))
sharder = Sharder(mesh)
weights = sharder.put(jnp.zeros((8, 6)), P("data", "model"))
rows = sharder.put_rows(jnp.zeros((16, 3)))
