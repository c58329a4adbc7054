"""Real code (JAX's own tutorials: `docs/parallel.py`, `docs/notebooks/shard_map.ipynb`): one mesh
per section, each made current with `jax.set_mesh(...)`, statements written twice word for word,
errors shown with `try: ... except Exception`, and `@auto_axes` functions. shardls used to read
every section with the last mesh set (111 false SH005 in shard_map.ipynb), to give two identical
statements the same parse (and so the same value), to type an array placed under the Auto mesh
with the Explicit mesh of a later section that read it first, and to type `@auto_axes` bodies.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, auto_axes

mesh = jax.make_mesh((4, 2), ("x", "y"))
jax.set_mesh(mesh)

a = jax.device_put(jnp.arange(8 * 16.0).reshape(8, 16), jax.P("x", "y"))  # expect: a


@jax.shard_map(in_specs=(jax.P("x", "y"),), out_specs=jax.P("x", None))
def rows(a_block):
    return jax.lax.psum(a_block, "y")


c = rows(a)

x = jax.device_put(np.arange(16).reshape(4, 4), jax.P("x", None))
y = jax.device_put(np.arange(16).reshape(4, 4), jax.P(None, "x"))
try:
    x + y  # JAX's ShardingTypeError, shown by the tutorial
except Exception as error:
    print(error)


@auto_axes
def add2(x, y):
    return x + y


result = add2(x, y, out_sharding=jax.P("x", None))

auto_mesh = jax.make_mesh((4, 2), ("X", "Y"), (AxisType.Auto, AxisType.Auto))
jax.set_mesh(auto_mesh)

u = jax.device_put(jnp.arange(8 * 4.0).reshape(8, 4), jax.P(None, "X"))
v = jax.device_put(jnp.arange(4 * 16.0).reshape(4, 16), jax.P("X", None))
w = jnp.dot(u, v)  # Auto axes: the compiler chooses, no error

stages = jax.make_mesh((2,), ("stages",))
jax.set_mesh(stages)

s = jax.device_put(jnp.arange(6.0), jax.P("stages"))  # expect: s

mesh = jax.make_mesh((4, 2), ("x", "y"))
jax.set_mesh(mesh)

b = jax.device_put(jnp.arange(8 * 16.0).reshape(8, 16), jax.P("x", "y"))  # expect: b
