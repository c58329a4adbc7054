"""A transformer block in Explicit mode, where the sharding of every array is part of its type.

`jax.make_mesh` gives Explicit axes: `jax.typeof(x)` says how `x` is split (`float32[8@data,16,64]`),
every operation has a sharding rule, and code whose shardings do not fit fails while it is traced.
Open this file with shardls and hover any array to see its type and per-device shape without
running anything; the one deliberate mistake at the end is underlined (`# expect-warning: SH301`:
a warning, because the `try` around it catches what JAX raises; without the `try` it is an error).
Run it with `python examples/explicit_attention.py`: it checks the types JAX gives, and that JAX
rejects the mistake with the error shardls reports.
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)

batch, seq, d_model, heads, d_head, d_ff = 8, 16, 64, 8, 8, 256

x = jax.device_put(jnp.ones((batch, seq, d_model)), P("data", None, None))
w_q = jax.device_put(jnp.full((d_model, heads, d_head), 0.02), P(None, "model", None))
w_k = jax.device_put(jnp.full((d_model, heads, d_head), 0.02), P(None, "model", None))
w_v = jax.device_put(jnp.full((d_model, heads, d_head), 0.02), P(None, "model", None))
w_o = jax.device_put(jnp.full((heads, d_head, d_model), 0.02), P("model", None, None))
w_up = jax.device_put(jnp.full((d_model, d_ff), 0.02), P(None, "model"))
w_down = jax.device_put(jnp.full((d_ff, d_model), 0.02), P("model", None))


def attention(x):
    q = jnp.einsum("bsd,dhk->bshk", x, w_q)  # float32[8@data,16,8@model,8]
    k = jnp.einsum("bsd,dhk->bshk", x, w_k)
    v = jnp.einsum("bsd,dhk->bshk", x, w_v)
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) * d_head**-0.5  # float32[8@data,8@model,16,16]
    weights = jax.nn.softmax(scores, axis=-1)
    context = jnp.einsum("bhqs,bshk->bqhk", weights, v)
    # Heads are split over `model` in both operands: the sum over them needs a place to go.
    return jnp.einsum("bqhk,hkd->bqd", context, w_o, out_sharding=P("data", None, None))


def mlp(x):
    hidden = jax.nn.gelu(x @ w_up)  # float32[8@data,16,256@model]
    return jnp.matmul(hidden, w_down, out_sharding=P("data", None, None))


@jax.jit
def block(x):
    x = x + attention(x)
    return x + mlp(x)


y = block(x)
assert str(jax.typeof(y)) == "float32[8@data,16,64]", jax.typeof(y)

# The mistake: `d_ff` is split over `model` in `hidden` and in `w_down`, so the product's sum over
# it could land sharded or replicated; JAX will not guess. Fix: say where it goes, as `mlp` does
# (`out_sharding=P("data", None, None)`).
hidden = jax.nn.gelu(x @ w_up)
try:
    wrong = hidden @ w_down  # expect-warning: SH301
except Exception as error:
    assert type(error).__name__ == "ShardingTypeError", error
    print(f"JAX: {type(error).__name__}: {str(error).splitlines()[0][:120]}")
else:
    raise AssertionError("JAX accepted a contraction over an axis sharded in both operands")
