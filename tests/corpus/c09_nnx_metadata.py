"""c9: `kernel_metadata={'out_sharding': ...}` and friends on Linear, Embed, RMSNorm, LayerNorm, Einsum (bonsai style)."""
import jax
from flax import nnx
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("fsdp", "tp"), axis_types=(AxisType.Explicit,) * 2)


class Block(nnx.Module):
    def __init__(self, vocab: int, dim: int, heads: int, *, rngs: nnx.Rngs):
        self.embed = nnx.Embed(vocab, dim, embedding_metadata={"out_sharding": P("tp", "fsdp")}, rngs=rngs)
        self.norm = nnx.RMSNorm(dim, scale_metadata={"out_sharding": ("tp",)}, rngs=rngs)
        self.ln = nnx.LayerNorm(dim, scale_metadata={"out_sharding": ("fsdp",)}, bias_metadata={"out_sharding": ("tp",)}, rngs=rngs)
        self.proj = nnx.Linear(
            dim,
            4 * dim,
            kernel_metadata={"out_sharding": ("fsdp", "tp")},
            bias_metadata={"out_sharding": ("tp",)},
            rngs=rngs,
        )
        self.qkv = nnx.Einsum("btd,dnh->btnh", (dim, heads, dim // heads), kernel_metadata={"out_sharding": (None, "tp", None)}, rngs=rngs)


with jax.set_mesh(mesh):
    block = Block(512, 64, 8, rngs=nnx.Rngs(0))  # expect: block
