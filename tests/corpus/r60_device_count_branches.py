"""Real code (tunix notebooks, examples/sft/vlm_training.py): the mesh adapts to the machine.

With the 8 devices the runner states, JAX and shardls take the `== 8` branch and the `else`.
With the count only assumed (tests/analysis/test_device_branches.py reads this file so), the
`== 1` branch states its count, so its `(1, 1)` mesh meets one device, not 8 (it was an SH107
"uses only the first 1 of 8 devices"), and the `>= 16` branch runs only where there are 16
devices (it was an SH104 "needs 16 devices, but only 8 are available").
"""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

num_tpus = len(jax.devices())
if num_tpus == 8:
    mesh_counts = (2, 4)
elif num_tpus == 1:
    mesh_counts = (1, 1)
else:
    raise ValueError(f"Unsupported number of TPUs: {num_tpus}")
mesh = jax.make_mesh(mesh_counts, ("fsdp", "tp"))
x = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P("fsdp", "tp")))  # expect: x

if jax.device_count() >= 16:
    big_shape = (4, 4)
else:
    big_shape = (2, jax.device_count() // 2)
big = jax.make_mesh(big_shape, ("data", "model"))
y = jax.device_put(jnp.zeros((4, 8)), NamedSharding(big, P("data", "model")))  # expect: y
