"""Layers stacked by calling `nnx.vmap` inside `__init__` (not as a decorator).

A module-level factory and a lambda over `rngs.split(n)` (Flax 0.12 deprecates the older
`rngs.fork(split=n)`, which the resolver tests cover), a factory wrapped in
`nnx.split_rngs(splits=n)(nnx.vmap(...))` whose stacked axis is sharded, a lambda over an array
of keys, and a stack without `transform_metadata` (its annotations keep the rank of one layer,
and Flax lays the stacked value out with them as written).
"""

import jax
from flax import nnx

wp = nnx.with_partitioning
init = nnx.initializers.lecun_normal()
STACKED = {nnx.PARTITION_NAME: None}


class Block(nnx.Module):
    def __init__(self, d: int, *, rngs: nnx.Rngs):
        self.attn = nnx.Linear(d, d, kernel_init=wp(init, ("data", "model")), use_bias=False, rngs=rngs)
        self.mlp = nnx.Linear(d, 4 * d, kernel_init=wp(init, (None, "model")), rngs=rngs)
        self.norm = nnx.LayerNorm(d, rngs=rngs)


def create_block(rngs: nnx.Rngs) -> Block:
    return Block(128, rngs=rngs)


class VmapModel(nnx.Module):
    def __init__(self, d: int, n_layers: int, *, rngs: nnx.Rngs):
        self.blocks = nnx.vmap(create_block, in_axes=0, out_axes=0, transform_metadata=STACKED)(
            rngs.split(n_layers)
        )
        self.experts = nnx.vmap(lambda r: Block(d, rngs=r), transform_metadata=STACKED)(rngs.split(4))

        def create_layer(r: nnx.Rngs) -> nnx.Linear:
            return nnx.Linear(d, 2 * d, kernel_init=wp(init, ("data", None)), rngs=r)

        self.stack = nnx.split_rngs(splits=n_layers)(
            nnx.vmap(create_layer, in_axes=(0,), out_axes=0, transform_metadata={nnx.PARTITION_NAME: "model"})
        )(rngs)
        keys = jax.random.split(jax.random.key(0), 2)
        self.pair = nnx.vmap(lambda key: nnx.Embed(1000, d, rngs=nnx.Rngs(key)), transform_metadata=STACKED)(
            keys
        )
        self.plain = nnx.vmap(create_layer)(rngs.split(2))


def make_model() -> VmapModel:
    return VmapModel(64, 8, rngs=nnx.Rngs(0))
