"""Real code (flax docs/guides/parallel_training/flax_on_pjit.ipynb): Linen parameters.

`nn.with_partitioning(init, names, mesh)` boxes a parameter with its mesh axes; with `mesh=`
given, Linen lays the value out on that mesh when `self.param` returns it (`Partitioned.unbox`
applies the sharding constraint), so `W2` is sharded inside `__call__`. Its shape comes from the
module's field and the input `init` is given: (depth, x.shape[-1]). `nn.with_logical_partitioning`
names are renamed by the `nn.logical_axis_rules` in effect, in order, a name no rule takes
sharding nothing: ('hidden', 'embed') -> ('model', None).
"""

from collections.abc import Callable

import jax
import jax.numpy as jnp
from flax import linen as nn
from jax.experimental import mesh_utils
from jax.sharding import Mesh

mesh = Mesh(devices=mesh_utils.create_device_mesh((2, 4)), axis_names=("data", "model"))
BATCH, DEPTH, WIDTH = 8, 64, 48


class DotReluDot(nn.Module):
    depth: int
    dense_init: Callable = nn.initializers.xavier_normal()

    @nn.compact
    def __call__(self, x):
        y = nn.Dense(
            self.depth, kernel_init=nn.with_partitioning(self.dense_init, (None, "model")), use_bias=False
        )(x)
        y = jax.nn.relu(y)
        W2 = self.param(
            "W2", nn.with_partitioning(self.dense_init, ("model", None), mesh), (self.depth, x.shape[-1])
        )  # expect: W2
        return jnp.dot(y, W2)


class LogicalDotReluDot(nn.Module):
    depth: int
    dense_init: Callable = nn.initializers.xavier_normal()

    @nn.compact
    def __call__(self, x):
        y = nn.Dense(
            self.depth,
            kernel_init=nn.with_logical_partitioning(self.dense_init, ("embed", "hidden")),
            use_bias=False,
        )(x)
        W3 = self.param(
            "W3",
            nn.with_logical_partitioning(self.dense_init, ("hidden", "embed"), mesh),
            (self.depth, x.shape[-1]),
        )  # expect: W3
        return jnp.dot(y, W3)


x = jnp.ones((BATCH, WIDTH))
variables = DotReluDot(DEPTH).init(jax.random.key(0), x)

rules = (("batch", "data"), ("hidden", "model"))
with nn.logical_axis_rules(rules):
    logical_variables = LogicalDotReluDot(DEPTH).init(jax.random.key(1), x)
