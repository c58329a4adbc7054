"""flax examples/nnx_toy_examples/10_fsdp_and_optimizer.py: parameters annotated through a small
rules object (`mesh_rules('embed', 'mlp')` returns `tuple(getattr(self, key) for key in keys)`)
and created inside `@nnx.jit def create_model()`. On an all-Auto mesh Flax applies
`with_sharding_constraint`, which inside jit pads the (32, 1) kernel split 4 ways on its size-1
dimension; created eagerly, the same parameter is an IndivisibleError.
"""

import dataclasses

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))


@dataclasses.dataclass(unsafe_hash=True)
class MeshRules:
    embed: str | None = None
    mlp: str | None = None

    def __call__(self, *keys: str) -> tuple[str | None, ...]:
        return tuple(getattr(self, key) for key in keys)


mesh_rules = MeshRules(embed=None, mlp="model")


class MLP(nnx.Module):
    def __init__(self, din, dmid, dout, rngs):
        self.w1 = nnx.Param(
            nnx.initializers.lecun_normal()(rngs.params(), (din, dmid)),
            out_sharding=mesh_rules("embed", "mlp"),
        )
        self.w2 = nnx.Param(
            nnx.initializers.lecun_normal()(rngs.params(), (dmid, dout)),
            out_sharding=mesh_rules("embed", "mlp"),
        )  # expect-warning: SH007

    def __call__(self, x):
        return jnp.tanh(x @ self.w1) @ self.w2


@nnx.jit
def create_model():
    return MLP(1, 32, 1, rngs=nnx.Rngs(0))


with jax.set_mesh(mesh):
    model = create_model()  # expect: model
