"""MultiHeadAttention: q/k/v/out parameters, separate `out_*` annotations, grouped kv heads,
normalize_qk with the layer-norm scale metadata."""

import jax
from flax import nnx
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
wp = nnx.with_partitioning
k = nnx.initializers.zeros_init()
z = nnx.initializers.zeros_init()

with jax.set_mesh(mesh):
    attention = nnx.MultiHeadAttention(  # expect: attention
        8,
        256,
        qkv_features=512,
        out_features=128,
        num_kv_heads=4,
        kernel_init=wp(k, ("data", "model", None)),
        bias_init=wp(z, ("model", None)),
        out_kernel_init=wp(k, ("model", None, "data")),
        out_bias_init=wp(z, ("data",)),
        normalize_qk=True,
        query_ln_scale_metadata={"out_sharding": ("model",)},
        decode=False,
        rngs=nnx.Rngs(0),
    )
    # The kernel annotation is shared with out.kernel (dims heads, head_dim, out): same rank, valid.
    shared = nnx.MultiHeadAttention(
        4, 64, kernel_init=wp(k, (None, "model", "data")), use_bias=False, decode=False, rngs=nnx.Rngs(0)
    )  # expect: shared
    # The rank-2 bias annotation is shared with the rank-1 out.bias: Flax rejects it.
    broken = nnx.MultiHeadAttention(
        4, 64, kernel_init=k, bias_init=wp(z, ("model", None)), decode=False, rngs=nnx.Rngs(0)
    )  # expect-error: SH207
