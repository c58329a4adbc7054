"""Calls of train_lib's jitted functions, sharding.py's lambdas and class, reexport.py's and
rows.py's helpers: each gets the layout its arguments make here, as if the helper were written in
this file."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec

from .reexport import put
from .rows import put_rows
from .sharding import P, Sharder, shard
from .train_lib import mesh, p_train_step, scale

y = p_train_step(jnp.zeros((8, 16)), jnp.zeros((16, 32)))  # expect: y
s = scale(jnp.ones((8, 4)))  # expect: s
a = jax.device_put(jnp.zeros((8, 8)), P("data"))  # expect: a
b = shard(jnp.zeros((8, 12)), "data", "model")  # expect: b
sharder = Sharder(mesh)
c = sharder.put(jnp.zeros((16, 8)), None, "model")  # expect: c
d = put(jnp.zeros((4, 8)), PartitionSpec("data"))  # expect: d
e = put_rows(jnp.zeros((8, 2)))  # expect: e
