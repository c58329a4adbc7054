"""The other annotation forms: `*_metadata` dicts (also the deprecated keys), `nnx.Param` with
`out_sharding=` or the deprecated `sharding=`/`sharding_names=`, P and NamedSharding annotations."""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)


class Custom(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        init = nnx.initializers.zeros_init()
        self.w = nnx.Param(init(rngs.params(), (64, 32)), out_sharding=P("model", "data"))
        self.b = nnx.Param(jnp.zeros((32,)), sharding=("model",))  # expect-warning: SH204
        self.c = nnx.Param(jnp.ones((16, 8)), sharding_names=(None, "data"))  # expect-warning: SH204


with jax.set_mesh(mesh):
    dense = nnx.Linear(
        32,
        64,
        kernel_init=nnx.initializers.zeros_init(),
        kernel_metadata={"out_sharding": ("data", "model")},
        bias_metadata={"out_sharding": P("model")},
        rngs=nnx.Rngs(0),
    )  # expect: dense
    old = nnx.Linear(
        32,
        64,
        kernel_init=nnx.initializers.zeros_init(),
        kernel_metadata={"sharding": (None, "model")},
        rngs=nnx.Rngs(0),
    )  # expect: old  # expect-warning: SH204
    custom = Custom(nnx.Rngs(0))  # expect: custom
named_init = nnx.with_partitioning(nnx.initializers.zeros_init(), NamedSharding(mesh, P("model", "data")))
named = nnx.Linear(32, 64, kernel_init=named_init, rngs=nnx.Rngs(0))  # expect: named
with jax.set_mesh(mesh):
    # Flax asserts that the NamedSharding's mesh is the context's, which is an AbstractMesh.
    clash = nnx.Linear(32, 64, kernel_init=named_init, rngs=nnx.Rngs(0))  # expect-error: SH212
