"""r58: `nnx.get_abstract_model(lambda: Model(...), mesh)` builds the model under that mesh.

Modelled on flax's docs_nnx/guides/flax_gspmd.ipynb ("Load a sharded model from a checkpoint"):
the model's parameters are annotated with `out_sharding`, which Flax applies when they are
created, and it needs a current mesh; `get_abstract_model` makes its mesh argument current
(`with jax.set_mesh(mesh):` around `nnx.eval_shape`). Built there, the model's layers met no
mesh, and shardls reported SH201 ("An auto mesh context ... is required") JAX never raises.
"""

import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

auto_mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


class DotReluDot(nnx.Module):
    def __init__(self, depth: int, rngs: nnx.Rngs):
        init_fn = nnx.initializers.lecun_normal()
        self.dot1 = nnx.Linear(
            depth,
            depth,
            kernel_init=nnx.with_partitioning(init_fn, (None, "model")),
            use_bias=False,
            rngs=rngs,
        )
        self.w2 = nnx.Param(init_fn(rngs.params(), (depth, depth)), out_sharding=("model", None))


graphdef, abstract_state = nnx.get_abstract_model(lambda: DotReluDot(64, rngs=nnx.Rngs(0)), auto_mesh)
batch = jax.device_put(jnp.zeros((8, 64)), NamedSharding(auto_mesh, P("data", None)))  # expect: batch
