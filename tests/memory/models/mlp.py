"""A two-layer MLP with a bias, annotated with mesh axis names (the smallest model)."""

from flax import nnx

wp = nnx.with_partitioning
init = nnx.initializers.lecun_normal()


class MLP(nnx.Module):
    def __init__(self, d_model: int = 1024, d_ff: int = 4096, *, rngs: nnx.Rngs):
        self.up = nnx.Linear(d_model, d_ff, kernel_init=wp(init, ("data", "model")), rngs=rngs)
        self.down = nnx.Linear(d_ff, d_model, kernel_init=wp(init, ("model", "data")), rngs=rngs)
        self.norm = nnx.LayerNorm(d_model, rngs=rngs)


def make_model() -> MLP:
    return MLP(512, d_ff=2048, rngs=nnx.Rngs(0))
