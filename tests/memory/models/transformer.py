"""A transformer with logical axis names and layers stacked by `nnx.vmap` (bfloat16 params)."""

import dataclasses

import jax.numpy as jnp
from flax import nnx

RULES = (("vocab", "model"), ("embed", "data"), ("heads", "model"), ("kv", None), ("mlp", "model"))
init = nnx.initializers.lecun_normal()


@dataclasses.dataclass(frozen=True)
class Config:
    vocab: int = 32000
    d_model: int = 1024
    num_heads: int = 16
    head_dim: int = 64
    d_ff: int = 4096
    num_layers: int = 12


def logical(*names):
    return nnx.with_partitioning(init, names)


class Block(nnx.Module):
    def __init__(self, cfg: Config, *, rngs: nnx.Rngs):
        self.norm = nnx.RMSNorm(cfg.d_model, param_dtype=jnp.bfloat16, rngs=rngs)
        self.attn = nnx.MultiHeadAttention(
            num_heads=cfg.num_heads,
            in_features=cfg.d_model,
            qkv_features=cfg.num_heads * cfg.head_dim,
            kernel_init=logical("embed", "heads", "kv"),
            out_kernel_init=logical("heads", "kv", "embed"),
            use_bias=False,
            decode=False,
            param_dtype=jnp.bfloat16,
            rngs=rngs,
        )
        self.up = nnx.Linear(
            cfg.d_model,
            cfg.d_ff,
            kernel_init=logical("embed", "mlp"),
            use_bias=False,
            param_dtype=jnp.bfloat16,
            rngs=rngs,
        )
        self.down = nnx.Linear(
            cfg.d_ff,
            cfg.d_model,
            kernel_init=logical("mlp", "embed"),
            use_bias=False,
            param_dtype=jnp.bfloat16,
            rngs=rngs,
        )


class Transformer(nnx.Module):
    def __init__(self, cfg: Config, *, rngs: nnx.Rngs):
        self.embed = nnx.Embed(
            cfg.vocab,
            cfg.d_model,
            embedding_init=logical("vocab", "embed"),
            param_dtype=jnp.bfloat16,
            rngs=rngs,
        )

        @nnx.split_rngs(splits=cfg.num_layers)
        @nnx.vmap(in_axes=(0,), out_axes=0, transform_metadata={nnx.PARTITION_NAME: None})
        def create_blocks(rngs: nnx.Rngs) -> Block:
            return Block(cfg, rngs=rngs)

        self.blocks = create_blocks(rngs)
        self.final_norm = nnx.RMSNorm(cfg.d_model, param_dtype=jnp.bfloat16, rngs=rngs)


def make_model() -> Transformer:
    with nnx.logical_axis_rules(RULES):
        return Transformer(Config(), rngs=nnx.Rngs(0))
