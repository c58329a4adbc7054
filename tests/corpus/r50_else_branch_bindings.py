"""r50: a name bound in the body of an `if` is not what its `else` reads (issue #12 §2).

Modelled on flax docs/guides/parallel_training/flax_on_pjit.ipynb: `MLP.__call__` applies its
layers with `if self.use_scan: x, _ = nn.scan(DotReluDot, ...)(self.depth)(x)` and `else: for i
in range(self.num_layers): x, _ = DotReluDot(self.depth)(x)`, initialised through `init_fn(k, x,
model)` (the notebook also traces it under `jax.eval_shape`); the `else` branch
applies the layer to the module's input (the scan's result was read there, so every layout inside
DotReluDot had no shape). And a helper whose `if` branch rebinds its argument to an array its
`else` never places (the `else` read it, and shardls reported an SH001 JAX never raises).
"""

from collections.abc import Callable

import jax
import jax.numpy as jnp
from flax import linen as nn
from jax.experimental import mesh_utils
from jax.lax import with_sharding_constraint
from jax.sharding import Mesh, NamedSharding, PartitionSpec

mesh = Mesh(devices=mesh_utils.create_device_mesh((2, 4)), axis_names=("data", "model"))


def mesh_sharding(pspec: PartitionSpec) -> NamedSharding:
    return NamedSharding(mesh, pspec)


class DotReluDot(nn.Module):
    depth: int
    dense_init: Callable = nn.initializers.xavier_normal()

    @nn.compact
    def __call__(self, x):
        y = nn.Dense(self.depth, use_bias=False)(x)
        y = jax.nn.relu(y)
        y = with_sharding_constraint(y, mesh_sharding(PartitionSpec("data", "model")))  # expect: y
        W2 = self.param("W2", self.dense_init, (self.depth, x.shape[-1]))
        z = jnp.dot(y, W2)
        z = with_sharding_constraint(z, mesh_sharding(PartitionSpec("data", None)))  # expect: z
        return z, None


class MLP(nn.Module):
    num_layers: int
    depth: int
    use_scan: bool

    @nn.compact
    def __call__(self, x):
        if self.use_scan:
            x, _ = nn.scan(
                DotReluDot,
                length=self.num_layers,
                variable_axes={"params": 0},
                split_rngs={"params": True},
                metadata_params={nn.PARTITION_NAME: None},
            )(self.depth)(x)
        else:
            for i in range(self.num_layers):
                x, _ = DotReluDot(self.depth)(x)
        return x


BATCH, LAYERS, DEPTH, USE_SCAN = 8, 2, 64, False
x = jnp.ones((BATCH, 48))
model = MLP(LAYERS, DEPTH, USE_SCAN)


def init_fn(k, x, model):
    return model.init(k, x)


variables = init_fn(jax.random.key(0), x, model)


rows = mesh_sharding(PartitionSpec("data"))


def place(batch, pad):
    if pad:
        batch = jnp.zeros((3, 5))
    else:
        placed = jax.device_put(batch, rows)  # expect: placed
    return batch


out = place(jnp.ones((8, 4)), False)
padded = place(jnp.ones((16, 4)), True)

flag = False
x = jnp.ones((8, 4))
if flag:
    x = jnp.ones((3, 5))
else:
    kept = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data")))  # expect: kept
