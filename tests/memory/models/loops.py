"""A model whose layers are appended in `for` loops rather than built by comprehensions.

Identical blocks appended to an `nnx.List`, adapters whose sizes follow `enumerate(widths)`,
`.extend` and `+=`, a grid built in nested loops, attributes set with `setattr`, and an
`nnx.Sequential` of layers whose width doubles each iteration (a value one iteration passes to
the next). Flax 0.12 keeps lists of modules only in `nnx.List` (a plain list attribute is
rejected), so local lists are wrapped before they become attributes.
"""

import dataclasses

import jax.numpy as jnp
from flax import nnx

wp = nnx.with_partitioning
init = nnx.initializers.lecun_normal()


@dataclasses.dataclass(frozen=True)
class Config:
    d_model: int = 256
    d_ff: int = 1024
    n_layers: int = 6
    widths: tuple[int, ...] = (32, 64, 128)


class Block(nnx.Module):
    def __init__(self, cfg: Config, *, rngs: nnx.Rngs):
        self.norm = nnx.RMSNorm(cfg.d_model, rngs=rngs)
        self.up = nnx.Linear(
            cfg.d_model,
            cfg.d_ff,
            kernel_init=wp(init, ("data", "model")),
            param_dtype=jnp.bfloat16,
            rngs=rngs,
        )
        self.down = nnx.Linear(
            cfg.d_ff,
            cfg.d_model,
            kernel_init=wp(init, ("model", "data")),
            param_dtype=jnp.bfloat16,
            rngs=rngs,
        )


class LoopModel(nnx.Module):
    def __init__(self, cfg: Config, *, rngs: nnx.Rngs):
        self.layers = nnx.List()
        for _ in range(cfg.n_layers):
            self.layers.append(Block(cfg, rngs=rngs))

        adapters = []
        for i, width in enumerate(cfg.widths):
            adapters.append(
                nnx.Linear(width, cfg.d_model * (i + 1), kernel_init=wp(init, ("model",)), rngs=rngs)
            )
        self.adapters = nnx.List(adapters)

        self.heads = nnx.List()
        self.heads.extend([nnx.Linear(cfg.d_model, 16, use_bias=False, rngs=rngs) for _ in range(2)])
        self.heads += [nnx.Embed(100, cfg.d_model, rngs=rngs)]

        self.grid = nnx.List()
        for _ in range(2):
            row = nnx.List()
            for j in range(3):
                row.append(nnx.Linear(8 * (j + 1), 8, rngs=rngs))
            self.grid.append(row)

        for i in range(2):
            setattr(self, f"proj_{i}", nnx.Linear(cfg.d_model, 8 * (i + 1), use_bias=False, rngs=rngs))

        mlp = []
        d = cfg.d_model
        for _ in range(3):
            mlp.append(nnx.Linear(d, 2 * d, kernel_init=wp(init, (None, "model")), rngs=rngs))
            d = 2 * d
        self.mlp = nnx.Sequential(*mlp)
        self.out = nnx.Linear(d, cfg.d_model, use_bias=False, rngs=rngs)


def make_model() -> LoopModel:
    return LoopModel(Config(), rngs=nnx.Rngs(0))
