"""Real code (EasyLM jax_utils.get_jax_mesh): a mesh from a `'1,-1,1'` string, names appended in a loop.

No error may come from it: the list filled by `.append()` in a loop over an unknown iterable is
not `[]`, a reshape to a list built by a comprehension is not 1-D, and only the `else` branch
runs for `'1,-1,1'`. (Ideal: `x` resolved on dp=1, fsdp=8, mp=1, per device (1, 4).)
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import mesh_utils
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P


def get_jax_mesh(axis_dims, names):
    if ":" in axis_dims:
        dims = []
        dim_names = []
        for axis in axis_dims.split(","):
            name, dim = axis.split(":")
            dims.append(int(dim))
            dim_names.append(name)
    else:
        dims = [int(x) for x in axis_dims.split(",")]
        dim_names = names
    mesh_shape = np.arange(jax.device_count()).reshape(dims).shape
    return Mesh(mesh_utils.create_device_mesh(mesh_shape), dim_names)


mesh = get_jax_mesh("1,-1,1", ("dp", "fsdp", "mp"))
x = jax.device_put(jnp.zeros((8, 4)), NamedSharding(mesh, P("fsdp")))
named = get_jax_mesh("dp:2,fsdp:4", ("dp", "fsdp"))
y = jax.device_put(jnp.zeros((8, 4)), NamedSharding(named, P("dp", "fsdp")))
control = jax.device_put(jnp.zeros((8, 4)), NamedSharding(jax.make_mesh((8,), ("d",)), P("d")))  # expect: control
