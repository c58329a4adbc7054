"""r57: a function that wraps a nested `def` anew on each call passes that call's arrays to it.

Modelled on maxtext's tests/unit/multi_token_prediction_test.py (`_run_cp_shift(x)`): the spec
is built from the argument's rank, a `shard_map` decorates a nested function with it, and the
function is called with the argument. Called with a rank-2 and a rank-3 array, shardls paired
each call's spec with every call's array, and reported an SH002 error ("3 entries but the array
has rank 2") JAX never raises.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("context", "x"))


def run(x):
    pspec = P(*tuple((None if i != 1 else "context") for i in range(x.ndim)))

    @functools.partial(jax.shard_map, mesh=mesh, in_specs=pspec, out_specs=pspec)
    def shift(local):
        return local + 1  # expect: local

    return shift(x)


flat = run(jnp.zeros((1, 16)))
cube = run(jnp.zeros((2, 16, 4)))
