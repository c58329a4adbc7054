"""a5: a flat device list with a bare-string axis name, and `make_mesh((n,), 'model')`."""
import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

ckpt = Mesh(jax.devices(), "ckpt")
a = jax.device_put(jnp.zeros((24, 5)), NamedSharding(ckpt, P("ckpt")))  # expect: a

model = jax.make_mesh((8,), "model")
b = jax.device_put(jnp.zeros((3, 16)), NamedSharding(model, P(None, "model")))  # expect: b
