"""A two-layer Flax NNX MLP whose parameters are sharded with `nnx.with_partitioning`.

Run it with `python examples/mlp_nnx.py` (it fakes 8 CPU devices), or open it in an editor with
shardls to see the layout of every kernel and bias without running anything.

The mesh has a `data` axis (batch parallelism) and a `model` axis (tensor parallelism). The first
kernel splits its output features over `model` and the second splits its input features over
`model`, the classic Megatron pairing: the hidden activation stays sharded between the two layers
and only the final output needs a reduction across `model`.
"""

import os

# Fake 8 devices on the CPU. This must happen before jax is imported.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

D_MODEL = 512
D_HIDDEN = 4 * D_MODEL
BATCH = 64

# Auto axes: the compiler propagates shardings between the annotated points.
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))


class MLP(nnx.Module):
    def __init__(self, d_model: int, d_hidden: int, *, rngs: nnx.Rngs):
        init = nnx.initializers.lecun_normal()
        # (d_model, d_hidden): replicated rows, hidden features split 4 ways over `model`.
        self.up = nnx.Linear(
            d_model,
            d_hidden,
            kernel_init=nnx.with_partitioning(init, (None, "model")),
            bias_init=nnx.with_partitioning(nnx.initializers.zeros_init(), ("model",)),
            rngs=rngs,
        )
        # (d_hidden, d_model): the hidden features again split over `model`; the bias is replicated.
        self.down = nnx.Linear(
            d_hidden,
            d_model,
            kernel_init=nnx.with_partitioning(init, ("model", None)),
            rngs=rngs,
        )

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.down(jax.nn.gelu(self.up(x)))


@nnx.jit
def forward(model: MLP, x: jax.Array) -> jax.Array:
    return model(x)


def main() -> None:
    # Flax shards each annotated parameter as it is created, using the mesh set here.
    with jax.set_mesh(mesh):
        model = MLP(D_MODEL, D_HIDDEN, rngs=nnx.Rngs(0))
        x = jax.device_put(jnp.ones((BATCH, D_MODEL)), P("data", None))
        y = forward(model, x)

    for path, param in nnx.to_flat_state(nnx.state(model, nnx.Param)):
        value = param.get_value()
        name = ".".join(map(str, path))
        print(f"{name:12} global {value.shape} per device {value.sharding.shard_shape(value.shape)}")
    print(
        "output",
        y.shape,
        "sharded as",
        y.sharding.spec if isinstance(y.sharding, NamedSharding) else y.sharding,
    )
    assert model.up.kernel.get_value().sharding.shard_shape((D_MODEL, D_HIDDEN)) == (D_MODEL, D_HIDDEN // 4)
    assert y.shape == (BATCH, D_MODEL)


if __name__ == "__main__":
    main()
