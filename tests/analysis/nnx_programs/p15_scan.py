"""Layers created under `nnx.scan` are stacked like `nnx.vmap`'s: the decorated factory over split
rngs, and the call form with `length=`. The spec gains the stacked entry only with
`transform_metadata={nnx.PARTITION_NAME: ...}`: without it (scan's default) the annotation stays
one entry short and `nnx.get_partition_spec` shards the wrong dimensions (SH208)."""

import jax
from flax import nnx
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
init = nnx.initializers.zeros_init()
NUM_LAYERS = 4


class Block(nnx.Module):
    def __init__(self, dim: int, rngs: nnx.Rngs):
        self.up = nnx.Linear(
            dim, 4 * dim, kernel_init=nnx.with_partitioning(init, (None, "model")), rngs=rngs
        )


class Stack(nnx.Module):
    def __init__(self, dim: int, rngs: nnx.Rngs):
        @nnx.split_rngs(splits=NUM_LAYERS)
        @nnx.scan(in_axes=(0,), out_axes=0, transform_metadata={nnx.PARTITION_NAME: "data"})
        def create_block(rngs: nnx.Rngs) -> Block:
            return Block(dim, rngs)

        self.blocks = create_block(rngs)


def make_expert(rngs: nnx.Rngs) -> nnx.Linear:
    return nnx.Linear(16, 64, kernel_init=nnx.with_partitioning(init, ("data", "model")), rngs=rngs)


with jax.set_mesh(mesh):
    stack = Stack(32, nnx.Rngs(0))
    state = nnx.state(stack)
    nnx.update(stack, jax.device_put(state, nnx.get_named_sharding(state, mesh)))  # expect: stack
    experts = nnx.scan(make_expert, in_axes=(None,), out_axes=0, length=4)(
        nnx.Rngs(1)
    )  # expect-warning: SH208
    state = nnx.state(experts)
    nnx.update(experts, jax.device_put(state, nnx.get_named_sharding(state, mesh)))  # expect: experts
