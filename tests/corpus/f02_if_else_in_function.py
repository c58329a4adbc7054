"""if/else inside a function called with both flag values: each branch runs once under JAX."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))


def place(x, fsdp: bool):
    if fsdp:
        y = jax.device_put(x, NamedSharding(mesh, P(("data", "model"))))  # expect: y
    else:
        y = jax.device_put(x, NamedSharding(mesh, P("data")))  # expect: y
    return y


a = place(jnp.zeros((16, 4)), fsdp=True)
b = place(jnp.zeros((32, 8)), fsdp=False)
