"""b14: a local helper that shadows P and returns a NamedSharding (scaling-book), and `named_sharding(*names)`."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec

mesh = jax.make_mesh((2, 4), ("X", "Y"))


def P(*args):
    return NamedSharding(mesh, PartitionSpec(*args))


def named_sharding(*names):
    return NamedSharding(mesh, PartitionSpec(*names))


A = jax.device_put(jnp.zeros((8, 2048)), P("X", "Y"))  # expect: A
B = jax.device_put(jnp.zeros((2048, 8192)), P(None, "Y"))  # expect: B
C = jax.device_put(jnp.zeros((16, 4)), named_sharding(("X", "Y")))  # expect: C
