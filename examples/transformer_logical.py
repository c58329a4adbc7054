"""A small decoder-only transformer with logical axis names and stacked layers.

Parameters are annotated with *logical* names (`embed`, `heads`, `mlp`, ...) that describe what a
dimension means; `LOGICAL_RULES` then decides which mesh axis, if any, each name is sharded over.
Changing the parallelism strategy means editing the rules, not the model.

The layers are created once with `nnx.vmap`, so every parameter of `blocks` gains a leading layer
dimension. `transform_metadata={nnx.PARTITION_NAME: None}` adds a matching leading `None` to each
annotation, so the stacked kernel `(layers, embed, mlp)` is sharded as `(None, 'data', 'model')`.
Without it the annotation would stay one entry short and shard the wrong dimensions.

Run it with `python examples/transformer_logical.py` (it fakes 8 CPU devices).
"""

import dataclasses
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType


@dataclasses.dataclass(frozen=True)
class Config:
    vocab: int = 1024
    d_model: int = 128
    num_heads: int = 8
    head_dim: int = 16
    d_ff: int = 512
    num_layers: int = 4
    seq_len: int = 32
    batch: int = 8


# Logical name -> mesh axis. `None` keeps a dimension whole on every device.
LOGICAL_RULES = (
    ("batch", "data"),
    ("vocab", "model"),
    ("embed", "data"),  # FSDP-style: the embedding dimension of weights is split over `data`
    ("heads", "model"),
    ("kv", None),
    ("mlp", "model"),
)

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
init = nnx.initializers.lecun_normal()


def partitioned(initializer, *names):
    """Annotate an initializer with logical names (resolved by the rules in force at creation)."""
    return nnx.with_partitioning(initializer, names)


class Block(nnx.Module):
    """Pre-norm attention and MLP. Kernel shapes: query (embed, heads, kv), out (heads, kv, embed)."""

    def __init__(self, cfg: Config, *, rngs: nnx.Rngs):
        self.attn_norm = nnx.RMSNorm(
            cfg.d_model, scale_init=partitioned(nnx.initializers.ones_init(), "embed"), rngs=rngs
        )
        self.attn = nnx.MultiHeadAttention(
            num_heads=cfg.num_heads,
            in_features=cfg.d_model,
            qkv_features=cfg.num_heads * cfg.head_dim,
            kernel_init=partitioned(init, "embed", "heads", "kv"),
            out_kernel_init=partitioned(init, "heads", "kv", "embed"),
            use_bias=False,
            decode=False,
            rngs=rngs,
        )
        self.mlp_norm = nnx.RMSNorm(
            cfg.d_model, scale_init=partitioned(nnx.initializers.ones_init(), "embed"), rngs=rngs
        )
        self.mlp_in = nnx.Linear(
            cfg.d_model, cfg.d_ff, kernel_init=partitioned(init, "embed", "mlp"), use_bias=False, rngs=rngs
        )
        self.mlp_out = nnx.Linear(
            cfg.d_ff, cfg.d_model, kernel_init=partitioned(init, "mlp", "embed"), use_bias=False, rngs=rngs
        )

    def __call__(self, x: jax.Array) -> jax.Array:
        h = self.attn_norm(x)
        x = x + self.attn(h, mask=nnx.make_causal_mask(jnp.ones(x.shape[:2])))
        h = self.mlp_norm(x)
        return x + self.mlp_out(jax.nn.gelu(self.mlp_in(h)))


class Transformer(nnx.Module):
    def __init__(self, cfg: Config, *, rngs: nnx.Rngs):
        self.embed = nnx.Embed(
            cfg.vocab,
            cfg.d_model,
            embedding_init=partitioned(nnx.initializers.normal(0.02), "vocab", "embed"),
            rngs=rngs,
        )

        # One Block per layer, stacked along a new leading axis that stays unsharded (None).
        @nnx.split_rngs(splits=cfg.num_layers)
        @nnx.vmap(in_axes=(0,), out_axes=0, transform_metadata={nnx.PARTITION_NAME: None})
        def create_blocks(rngs: nnx.Rngs) -> Block:
            return Block(cfg, rngs=rngs)

        self.blocks = create_blocks(rngs)
        self.final_norm = nnx.RMSNorm(cfg.d_model, rngs=rngs)

    def __call__(self, tokens: jax.Array) -> jax.Array:
        x = self.embed(tokens)

        @nnx.scan(in_axes=(0, nnx.Carry), out_axes=nnx.Carry, transform_metadata={nnx.PARTITION_NAME: None})
        def run_layer(block: Block, x: jax.Array) -> jax.Array:
            return block(x)

        x = run_layer(self.blocks, x)
        return self.embed.attend(self.final_norm(x))


@nnx.jit
def logits_of(model: Transformer, tokens: jax.Array) -> jax.Array:
    return model(tokens)


def main() -> None:
    cfg = Config()
    with jax.set_mesh(mesh), nnx.logical_axis_rules(LOGICAL_RULES):
        model = Transformer(cfg, rngs=nnx.Rngs(0))
        tokens = jnp.zeros((cfg.batch, cfg.seq_len), dtype=jnp.int32)
        logits = logits_of(model, tokens)

    for path, param in nnx.to_flat_state(nnx.state(model, nnx.Param)):
        value = param.get_value()
        print(
            f"{'.'.join(map(str, path)):32} {value.shape!s:18} per device {value.sharding.shard_shape(value.shape)}"
        )
    print("logits", logits.shape)
    kernel = model.blocks.mlp_in.kernel.get_value()
    assert kernel.shape == (cfg.num_layers, cfg.d_model, cfg.d_ff)
    assert kernel.sharding.shard_shape(kernel.shape) == (cfg.num_layers, cfg.d_model // 2, cfg.d_ff // 4)
    assert logits.shape == (cfg.batch, cfg.seq_len, cfg.vocab)


if __name__ == "__main__":
    main()
