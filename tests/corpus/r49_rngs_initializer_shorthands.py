"""r49: `nnx.Rngs` initializer shorthands make arrays of the shape asked (issue #12 §2).

`rngs.lecun_normal()` is `nnx.initializers.lecun_normal()` with the key bound to the stream's
next one: calling it with a shape makes the array (float32 unless a dtype is given). Modelled on
flax docs_nnx/guides/flax_gspmd.ipynb (`w = nnx.Param(rngs.lecun_normal()((4, 8)),
out_sharding=(None, 'model'))` under `jax.set_mesh(auto_mesh)`) and tests/nnx/spmd_test.py:288.
"""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

auto_mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
rngs = nnx.Rngs(0)

with jax.set_mesh(auto_mesh):
    w = nnx.Param(rngs.lecun_normal()((4, 8)), out_sharding=(None, "model"))  # expect: w
    h = jax.device_put(rngs.he_uniform(in_axis=0)((8, 4), jnp.bfloat16), P("data"))  # expect: h
    g = jax.device_put(rngs.glorot_normal()((6, 4)), P(None, "model"))  # expect: g

with jax.set_mesh(auto_mesh):
    bad = nnx.Param(rngs.xavier_uniform()((4, 6)), out_sharding=(None, "model"))  # expect-error: SH001
