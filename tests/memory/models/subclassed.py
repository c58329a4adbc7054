"""Models built from subclasses of Flax layers, as real code writes them (Flax's gemma example has
`class ScaledEmbed(nnx.Embed)` with only a new `__call__`): one that inherits the layer's
`__init__`, and one whose own `__init__` calls `super().__init__(...)` and adds a parameter."""

import jax.numpy as jnp
from flax import nnx

wp = nnx.with_partitioning


class ScaledEmbed(nnx.Embed):
    def __call__(self, x: jnp.ndarray) -> jnp.ndarray:
        return super().__call__(x) * jnp.sqrt(self.features)


class GatedLinear(nnx.Linear):
    def __init__(self, d_in: int, d_out: int, *, rngs: nnx.Rngs):
        super().__init__(
            d_in,
            d_out,
            use_bias=False,
            kernel_init=wp(nnx.initializers.lecun_normal(), (None, "model")),
            param_dtype=jnp.bfloat16,
            rngs=rngs,
        )
        self.gate = nnx.Param(jnp.ones((d_out,), jnp.float32))


class Model(nnx.Module):
    def __init__(self, vocab: int, d: int, *, rngs: nnx.Rngs):
        self.embed = ScaledEmbed(
            vocab, d, embedding_init=wp(nnx.initializers.normal(), ("model", "data")), rngs=rngs
        )
        self.proj = GatedLinear(d, 4 * d, rngs=rngs)


def make_model() -> Model:
    return Model(1024, 256, rngs=nnx.Rngs(0))
