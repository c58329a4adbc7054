"""Real code builds trees of shardings and places trees of arrays (tunix rl/rl_cluster.py,
flax examples): `shardings = jax.tree.map(lambda s: NamedSharding(mesh, s), specs)`,
`jax.device_put(params, shardings)`, `jax.tree.map(lambda x: x.astype(dtype), params)`, dict comprehensions of shardings, and a
tuple of arrays placed with one sharding (a pytree prefix). Each array gets its own layout.
"""

import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
specs = {"kernel": P(None, "model"), "bias": P("model"), "scale": None}
params = {"kernel": jnp.ones((16, 32)), "bias": jnp.zeros((32,)), "scale": None}

shardings = jax.tree.map(lambda spec: NamedSharding(mesh, spec), specs)
half = jax.tree.map(lambda x: x.astype(jnp.bfloat16), params)
kernel = jax.device_put(half["kernel"], shardings["kernel"])  # expect: kernel
placed = jax.device_put(params, shardings)
first, second = jax.device_put(
    (params["kernel"], params["bias"]), NamedSharding(mesh, P("model"))
)  # expect: first, second
by_name = {name: NamedSharding(mesh, spec) for name, spec in specs.items() if spec is not None}
bias = jax.device_put(params["bias"], by_name["bias"])  # expect: bias
grads = jax.tree_util.tree_map(jnp.zeros_like, params)
zeros = jax.device_put(grads["kernel"], NamedSharding(mesh, P("data")))  # expect: zeros
