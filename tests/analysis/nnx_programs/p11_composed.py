"""Modules made of modules: sizes from call-site arguments and a config dataclass, layers in
comprehensions (alike, and with per-layer sizes), and a module never instantiated in the file."""

import dataclasses

import jax
from flax import nnx
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
wp = nnx.with_partitioning
init = nnx.initializers.zeros_init()


@dataclasses.dataclass(frozen=True)
class Config:
    vocab: int = 1024
    d_model: int = 128
    d_ff: int = 512
    num_layers: int = 2
    widths: tuple[int, ...] = (128, 64, 32)


class MLP(nnx.Module):
    def __init__(self, d_model: int, d_ff: int, *, rngs: nnx.Rngs):
        self.up = nnx.Linear(d_model, d_ff, kernel_init=wp(init, ("data", "model")), rngs=rngs)
        self.down = nnx.Linear(d_ff, d_model, kernel_init=wp(init, ("model", "data")), rngs=rngs)


class Model(nnx.Module):
    def __init__(self, cfg: Config, rngs: nnx.Rngs):
        self.embed = nnx.Embed(
            cfg.vocab,
            cfg.d_model,
            embedding_init=init,
            embedding_metadata={"out_sharding": P("model", "data")},
            rngs=rngs,
        )
        self.mlps = nnx.List([MLP(cfg.d_model, cfg.d_ff, rngs=rngs) for _ in range(cfg.num_layers)])
        self.heads = nnx.List(
            [nnx.Linear(cfg.d_model, 64, kernel_init=wp(init, (None, "model")), rngs=rngs) for _ in range(3)]
        )
        widths = cfg.widths
        self.tower = nnx.List(
            [
                nnx.Linear(widths[i], widths[i + 1], kernel_init=wp(init, ("data", None)), rngs=rngs)
                for i in range(len(widths) - 1)
            ]
        )


with jax.set_mesh(mesh):
    model = Model(Config(d_ff=1024), nnx.Rngs(0))  # expect: model
    small = MLP(64, d_ff=256, rngs=nnx.Rngs(1))  # expect: small
