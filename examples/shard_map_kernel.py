"""A tensor-parallel matmul written per device with `jax.shard_map`, checked against the plain result.

`x @ w` with x (batch, d_in) and w (d_in, d_out). The contraction dimension d_in is split over the
`model` axis and the batch over `data`, so each device holds a (batch/2, d_in/4) block of x and a
(d_in/4, d_out) block of w. It multiplies its blocks into a partial sum of shape (batch/2, d_out),
and `psum` over `model` adds the four partial sums. Inside the body every array is a block: that is
the shape shardls shows for each argument.

Run it with `python examples/shard_map_kernel.py` (it fakes 8 CPU devices).
"""

import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

BATCH, D_IN, D_OUT = 16, 256, 64

# `Mesh` gives Auto axes; shard_map then reshards inputs to the in_specs as needed.
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))


def matmul_block(x_block: jax.Array, w_block: jax.Array) -> jax.Array:
    # x_block: (BATCH/2, D_IN/4), w_block: (D_IN/4, D_OUT): one device's share of the contraction.
    partial = x_block @ w_block
    # Sum the partial products over the 4 devices of the `model` axis: every one gets the total.
    return jax.lax.psum(partial, "model")


sharded_matmul = jax.jit(
    jax.shard_map(
        matmul_block,
        mesh=mesh,
        in_specs=(P("data", "model"), P("model", None)),
        out_specs=P("data", None),  # rows split over `data`, identical (summed) across `model`
    )
)


def main() -> None:
    x = jax.device_put(
        jnp.arange(BATCH * D_IN, dtype=jnp.float32).reshape(BATCH, D_IN) / 1000,
        NamedSharding(mesh, P("data", "model")),
    )
    w = jax.device_put(jnp.ones((D_IN, D_OUT)) / D_IN, NamedSharding(mesh, P("model", None)))
    y = sharded_matmul(x, w)
    print("x block", x.sharding.shard_shape(x.shape), "w block", w.sharding.shard_shape(w.shape))
    print("y", y.shape, "per device", y.sharding.shard_shape(y.shape))
    np.testing.assert_allclose(np.asarray(y), np.asarray(x) @ np.asarray(w), rtol=1e-5)
    assert y.sharding.shard_shape(y.shape) == (BATCH // 2, D_OUT)


if __name__ == "__main__":
    main()
