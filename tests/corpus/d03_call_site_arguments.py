"""d3: sizes are function or constructor arguments, bound at the call site (and defaults when not passed)."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))


def init_dense(d_in: int, d_out: int, spec: P = P(None, "model")):
    kernel = jax.device_put(jnp.zeros((d_in, d_out)), NamedSharding(mesh, spec))  # expect: kernel
    return kernel


class Block:
    def __init__(self, d_model: int, expansion: int = 4):
        self.d_ff = d_model * expansion
        self.w = jax.device_put(jnp.zeros((d_model, self.d_ff)), NamedSharding(mesh, P("data", "model")))  # expect: self.w


k1 = init_dense(64, 128)
k2 = init_dense(d_out=8, d_in=16, spec=P("data"))
blk = Block(32)
