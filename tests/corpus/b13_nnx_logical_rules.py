"""b13: logical axis names with `nnx.logical_axis_rules(rules)`: embed/mlp map to mesh axes, unlisted names to none."""
import jax
from flax import nnx
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
RULES = [("batch", "data"), ("embed", "data"), ("mlp", "model"), ("heads", ("data", "model")), ("vocab", None)]


class FeedForward(nnx.Module):
    def __init__(self, embed: int, mlp: int, vocab: int, *, rngs: nnx.Rngs):
        self.wi = nnx.Linear(embed, mlp, kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), ("embed", "mlp")), use_bias=False, rngs=rngs)
        self.wo = nnx.Linear(mlp, embed, kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), ("mlp", "embed")), use_bias=False, rngs=rngs)
        self.heads = nnx.Linear(embed, 64, kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, "heads")), use_bias=False, rngs=rngs)
        self.emb = nnx.Embed(vocab, embed, embedding_init=nnx.with_partitioning(nnx.initializers.normal(), ("vocab", "embed")), rngs=rngs)


with jax.set_mesh(mesh), nnx.logical_axis_rules(RULES):
    ff = FeedForward(32, 128, 100, rngs=nnx.Rngs(0))  # expect: ff
