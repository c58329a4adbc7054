"""Layers stacked by `nnx.scan` in `__init__`: Flax 0.12 creates the parameters of what a scanned
function builds with a leading axis of the scan's length, as `nnx.vmap` does.

A decorated factory over split rngs, the call form with `length=` and a carry (the result is a
`(carry, layers)` pair), and the call form over an array of rngs.
"""

import jax.numpy as jnp
from flax import nnx

wp = nnx.with_partitioning
init = nnx.initializers.lecun_normal()


class Layer(nnx.Module):
    def __init__(self, d: int, *, rngs: nnx.Rngs):
        self.proj = nnx.Linear(
            d, d, kernel_init=wp(init, ("data", "model")), param_dtype=jnp.bfloat16, rngs=rngs
        )
        self.norm = nnx.RMSNorm(d, rngs=rngs)


class ScanModel(nnx.Module):
    def __init__(self, d: int, n_layers: int, *, rngs: nnx.Rngs):
        @nnx.split_rngs(splits=n_layers)
        @nnx.scan(in_axes=(0,), out_axes=0, transform_metadata={nnx.PARTITION_NAME: None})
        def create_layers(r: nnx.Rngs) -> Layer:
            return Layer(d, rngs=r)

        self.layers = create_layers(rngs)

        def step(carry: int, r: nnx.Rngs) -> tuple[int, nnx.Linear]:
            return carry, nnx.Linear(d, 2 * d, kernel_init=wp(init, (None, "model")), rngs=r)

        _, self.experts = nnx.scan(
            step,
            in_axes=(nnx.Carry, 0),
            out_axes=(nnx.Carry, 0),
            transform_metadata={nnx.PARTITION_NAME: "data"},
        )(0, rngs.split(4))
        self.shared = nnx.scan(lambda r: nnx.Embed(512, d, rngs=r), in_axes=(None,), out_axes=0, length=3)(
            rngs
        )


def make_model() -> ScanModel:
    return ScanModel(128, 6, rngs=nnx.Rngs(0))
