"""c8: a custom NNX module with `nnx.Param(value, out_sharding=spec)` (and the deprecated `sharding=`)."""
import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("fsdp", "tp"), axis_types=(AxisType.Auto,) * 2)


class Embedder(nnx.Module):
    def __init__(self, vocab: int, dim: int, *, rngs: nnx.Rngs):
        init = nnx.initializers.normal()
        self.table = nnx.Param(init(rngs.params(), (vocab, dim)), out_sharding=("tp", "fsdp"))
        self.scale = nnx.Param(jnp.ones((dim,)), out_sharding=P("fsdp"))


class Legacy(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.w = nnx.Param(jnp.zeros((16, 8)), sharding=(None, "tp"))  # expect-warning: SH204


with jax.set_mesh(mesh):
    emb = Embedder(256, 32, rngs=nnx.Rngs(0))  # expect: emb
    old = Legacy(nnx.Rngs(0))  # expect: old
