"""Layers stacked by `@nnx.split_rngs` + `@nnx.vmap` with `transform_metadata` (the flax guide's
pattern): the stacked axis leads the shape and the spec; the model is then laid out as
`nnx.get_partition_spec` says."""

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
        self.norm = nnx.LayerNorm(
            dim, scale_init=nnx.with_partitioning(nnx.initializers.ones_init(), ("model",)), rngs=rngs
        )


class Stack(nnx.Module):
    def __init__(self, dim: int, rngs: nnx.Rngs):
        @nnx.split_rngs(splits=NUM_LAYERS)
        @nnx.vmap(in_axes=(0,), out_axes=0, transform_metadata={nnx.PARTITION_NAME: "data"})
        def create_block(rngs: nnx.Rngs) -> Block:
            return Block(dim, rngs)

        self.blocks = create_block(rngs)


@nnx.vmap(in_axes=0, out_axes=0, transform_metadata={nnx.PARTITION_NAME: None})
def create_replicated(rngs: nnx.Rngs) -> nnx.Linear:
    return nnx.Linear(16, 64, kernel_init=nnx.with_partitioning(init, ("data", "model")), rngs=rngs)


with jax.set_mesh(mesh):
    stack = Stack(32, nnx.Rngs(0))
    state = nnx.state(stack)
    nnx.update(stack, jax.device_put(state, nnx.get_named_sharding(state, mesh)))  # expect: stack
    replicated = create_replicated(nnx.Rngs(0).fork(split=3))
    state = nnx.state(replicated)
    nnx.update(replicated, jax.device_put(state, nnx.get_named_sharding(state, mesh)))  # expect: replicated
