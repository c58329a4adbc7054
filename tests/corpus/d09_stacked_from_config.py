"""d9: a stacked-layer axis whose size comes from a config passed to the model (flax guide / maxtext style)."""
import dataclasses

import jax
from flax import nnx
from jax.sharding import AxisType


@dataclasses.dataclass(frozen=True)
class Config:
    num_layers: int = 3
    dim: int = 32


mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)


class Block(nnx.Module):
    def __init__(self, cfg: Config, rngs: nnx.Rngs):
        self.mlp = nnx.Linear(cfg.dim, 4 * cfg.dim, kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), ("data", "model")), use_bias=False, rngs=rngs)


class Model(nnx.Module):
    def __init__(self, cfg: Config, rngs: nnx.Rngs):
        @nnx.split_rngs(splits=cfg.num_layers)
        @nnx.vmap(in_axes=(0,), out_axes=0, transform_metadata={nnx.PARTITION_NAME: None})
        def create_blocks(rngs: nnx.Rngs) -> Block:
            return Block(cfg, rngs)

        self.blocks = create_blocks(rngs)


with jax.set_mesh(mesh):
    model = Model(Config(), nnx.Rngs(0))  # expect: model
