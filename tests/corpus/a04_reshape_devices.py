"""a4: `Mesh(np.array(jax.devices()).reshape(...), names)`, including a `-1` reshape (EasyLM style)."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
a = jax.device_put(jnp.zeros((8, 8)), NamedSharding(mesh, P("x", "y")))  # expect: a


def get_jax_mp_mesh(mp: int) -> Mesh:
    return Mesh(np.array(jax.devices()).reshape(-1, mp), ("dp", "mp"))


mp_mesh = get_jax_mp_mesh(2)
b = jax.device_put(jnp.zeros((16, 6)), NamedSharding(mp_mesh, P("dp", "mp")))  # expect: b

devices = np.asarray(jax.devices()).reshape((1, 2, 4))
mesh3 = Mesh(devices, ("replica", "data", "model"))
c = jax.device_put(jnp.zeros((6, 8, 4)), NamedSharding(mesh3, P("replica", "data", "model")))  # expect: c
