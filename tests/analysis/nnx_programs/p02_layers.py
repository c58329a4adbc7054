"""Every layer's parameter shapes (reference §4.4), each parameter annotated, positional and
keyword arguments."""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
wp = nnx.with_partitioning
k = nnx.initializers.zeros_init()
z = nnx.initializers.zeros_init()
o = nnx.initializers.ones_init()
rngs = nnx.Rngs(0)

with jax.set_mesh(mesh):
    embed = nnx.Embed(
        1000, 64, embedding_init=wp(nnx.initializers.zeros_init(), ("model", "data")), rngs=rngs
    )  # expect: embed
    conv = nnx.Conv(
        8, 16, 3, kernel_init=wp(k, (None, "data", "model")), bias_init=wp(z, ("model",)), rngs=rngs
    )  # expect: conv
    conv2d = nnx.Conv(
        in_features=8,
        out_features=32,
        kernel_size=(3, 3),
        feature_group_count=4,
        kernel_init=wp(k, (None, None, "data", "model")),
        rngs=rngs,
    )  # expect: conv2d
    deconv = nnx.ConvTranspose(
        8, 16, (2, 2), kernel_init=wp(k, (None, None, "data", "model")), rngs=rngs
    )  # expect: deconv
    deconv_t = nnx.ConvTranspose(
        8, 16, (2, 2), transpose_kernel=True, kernel_init=wp(k, (None, None, "model", "data")), rngs=rngs
    )  # expect: deconv_t
    general = nnx.LinearGeneral(
        (4, 8),
        (2, 16),
        axis=(-2, -1),
        kernel_init=wp(k, ("data", None, None, "model")),
        bias_init=wp(z, (None, "model")),
        rngs=rngs,
    )  # expect: general
    batched = nnx.LinearGeneral(
        8,
        16,
        batch_axis={0: 4},
        kernel_init=wp(k, ("data", None, "model")),
        bias_init=wp(z, ("data", "model")),
        rngs=rngs,
    )  # expect: batched
    einsum = nnx.Einsum(
        "bd,dhk->bhk",
        (64, 8, 32),
        (8, 32),
        kernel_init=wp(k, ("data", "model", None)),
        bias_init=wp(z, ("model", None)),
        rngs=rngs,
    )  # expect: einsum
    nobias = nnx.Einsum(
        "bd,df->bf", kernel_shape=(64, 128), kernel_init=wp(k, (None, "model")), rngs=rngs
    )  # expect: nobias
    layer_norm = nnx.LayerNorm(
        64, scale_init=wp(o, ("model",)), bias_init=wp(z, ("data",)), rngs=rngs
    )  # expect: layer_norm
    rms = nnx.RMSNorm(64, scale_init=wp(o, ("model",)), param_dtype=jnp.bfloat16, rngs=rngs)  # expect: rms
    batch_norm = nnx.BatchNorm(
        32, scale_init=wp(o, (("data", "model"),)), use_bias=False, rngs=rngs
    )  # expect: batch_norm
    group_norm = nnx.GroupNorm(
        32, num_groups=8, scale_init=wp(o, ("model",)), bias_init=wp(z, ("data",)), rngs=rngs
    )  # expect: group_norm
