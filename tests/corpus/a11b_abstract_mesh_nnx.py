"""a11: a model far larger than the machine, laid out with `use_abstract_mesh` + `nnx.eval_shape` (no devices used)."""
import jax
from flax import nnx
from jax.sharding import AbstractMesh, AxisType

big = AbstractMesh((256, 16), ("fsdp", "tp"), axis_types=(AxisType.Explicit,) * 2)


class MLP(nnx.Module):
    def __init__(self, d_model: int, d_ff: int, rngs: nnx.Rngs):
        self.wi = nnx.Linear(d_model, d_ff, use_bias=False, kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), ("fsdp", "tp")), rngs=rngs)
        self.wo = nnx.Linear(d_ff, d_model, use_bias=False, kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), ("tp", "fsdp")), rngs=rngs)


with jax.sharding.use_abstract_mesh(big):
    abstract = nnx.eval_shape(lambda: MLP(8192, 28672, nnx.Rngs(0)))  # expect: abstract
