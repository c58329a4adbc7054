"""Llama-style decoder models built from a config dataclass: 7B- and 70B-class sizes.

Grouped-query attention (`n_kv_heads` < `n_heads`), a SwiGLU MLP, RMSNorm, untied embeddings,
one `Block` per layer in a list comprehension. Parameters are annotated with logical names and
sharded FSDP x tensor-parallel by `RULES`.
"""

import dataclasses

import jax.numpy as jnp
from flax import nnx

RULES = (("vocab", "tp"), ("embed", "fsdp"), ("heads", "tp"), ("kv", None), ("mlp", "tp"))
init = nnx.initializers.lecun_normal()


@dataclasses.dataclass(frozen=True)
class Config:
    vocab: int = 32000
    d_model: int = 4096
    n_layers: int = 32
    n_heads: int = 32
    n_kv_heads: int = 32
    d_ff: int = 11008
    dtype: str = "bfloat16"

    @classmethod
    def llama_7b(cls) -> "Config":
        return cls()

    @classmethod
    def llama_70b(cls) -> "Config":
        return cls(d_model=8192, n_layers=80, n_heads=64, n_kv_heads=8, d_ff=28672)

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


def logical(*names):
    return nnx.with_partitioning(init, names)


class Attention(nnx.Module):
    def __init__(self, cfg: Config, *, rngs: nnx.Rngs):
        dt = jnp.bfloat16
        self.q = nnx.Einsum(
            "bsd,dhk->bshk",
            (cfg.d_model, cfg.n_heads, cfg.head_dim),
            kernel_init=logical("embed", "heads", "kv"),
            param_dtype=dt,
            rngs=rngs,
        )
        self.k = nnx.Einsum(
            "bsd,dhk->bshk",
            (cfg.d_model, cfg.n_kv_heads, cfg.head_dim),
            kernel_init=logical("embed", "heads", "kv"),
            param_dtype=dt,
            rngs=rngs,
        )
        self.v = nnx.Einsum(
            "bsd,dhk->bshk",
            (cfg.d_model, cfg.n_kv_heads, cfg.head_dim),
            kernel_init=logical("embed", "heads", "kv"),
            param_dtype=dt,
            rngs=rngs,
        )
        self.o = nnx.Einsum(
            "bshk,hkd->bsd",
            (cfg.n_heads, cfg.head_dim, cfg.d_model),
            kernel_init=logical("heads", "kv", "embed"),
            param_dtype=dt,
            rngs=rngs,
        )


class MLP(nnx.Module):
    def __init__(self, cfg: Config, *, rngs: nnx.Rngs):
        dt = jnp.bfloat16
        self.gate = nnx.Linear(
            cfg.d_model,
            cfg.d_ff,
            use_bias=False,
            kernel_init=logical("embed", "mlp"),
            param_dtype=dt,
            rngs=rngs,
        )
        self.up = nnx.Linear(
            cfg.d_model,
            cfg.d_ff,
            use_bias=False,
            kernel_init=logical("embed", "mlp"),
            param_dtype=dt,
            rngs=rngs,
        )
        self.down = nnx.Linear(
            cfg.d_ff,
            cfg.d_model,
            use_bias=False,
            kernel_init=logical("mlp", "embed"),
            param_dtype=dt,
            rngs=rngs,
        )


class Block(nnx.Module):
    def __init__(self, cfg: Config, *, rngs: nnx.Rngs):
        self.attn_norm = nnx.RMSNorm(cfg.d_model, param_dtype=jnp.bfloat16, rngs=rngs)
        self.attn = Attention(cfg, rngs=rngs)
        self.mlp_norm = nnx.RMSNorm(cfg.d_model, param_dtype=jnp.bfloat16, rngs=rngs)
        self.mlp = MLP(cfg, rngs=rngs)


class Transformer(nnx.Module):
    def __init__(self, cfg: Config, *, rngs: nnx.Rngs):
        self.embed = nnx.Embed(
            cfg.vocab,
            cfg.d_model,
            embedding_init=logical("vocab", "embed"),
            param_dtype=jnp.bfloat16,
            rngs=rngs,
        )
        self.layers = nnx.List([Block(cfg, rngs=rngs) for _ in range(cfg.n_layers)])
        self.final_norm = nnx.RMSNorm(cfg.d_model, param_dtype=jnp.bfloat16, rngs=rngs)
        self.lm_head = nnx.Linear(
            cfg.d_model,
            cfg.vocab,
            use_bias=False,
            kernel_init=logical("embed", "vocab"),
            param_dtype=jnp.bfloat16,
            rngs=rngs,
        )


def make_7b() -> Transformer:
    with nnx.logical_axis_rules(RULES):
        return Transformer(Config.llama_7b(), rngs=nnx.Rngs(0))


def make_70b() -> Transformer:
    with nnx.logical_axis_rules(RULES):
        return Transformer(Config.llama_70b(), rngs=nnx.Rngs(0))
