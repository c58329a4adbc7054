"""Real code (MaxText src/maxtext/examples/shmap_collective_matmul.py): pjit's bare specs and `with mesh:`.

Unlike `jax.jit`, `pjit` resolves bare `PartitionSpec` shardings against the mesh of the
deprecated `with mesh:` context: no SH202, and the outputs are laid out on that mesh.
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.pjit import pjit
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

global_mesh = Mesh(np.array(jax.devices()[:4]).reshape(1, 4), ("fsdp", "tp"))


def gen_data_fn():
    return jnp.zeros((8, 16)), jnp.ones((8, 16))


data_fn = pjit(gen_data_fn, out_shardings=(P("fsdp", "tp"), P("fsdp", "tp")))

with global_mesh:  # deprecated (JAX warns); shardls does not see the with-mesh of a plain call here
    activations, weights = data_fn()  # expect: activations, weights
