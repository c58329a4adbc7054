"""b8: axis names in variables that may be None (`fsdp = 'fsdp' if use_fsdp else None`), both ways."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("fsdp", "tp"))


def shard_weight(x, use_fsdp: bool, is_sampling: bool):
    fsdp = "fsdp" if use_fsdp else None
    tp = None if is_sampling else "tp"
    w = jax.device_put(x, NamedSharding(mesh, P(tp, fsdp)))  # expect: w
    return w


w_train = shard_weight(jnp.zeros((16, 8)), use_fsdp=True, is_sampling=False)
w_sample = shard_weight(jnp.zeros((16, 8)), use_fsdp=False, is_sampling=True)

USE_FSDP = False
fsdp_axis = "fsdp" if USE_FSDP else None
bias = jax.device_put(jnp.zeros((6, 8)), NamedSharding(mesh, P(fsdp_axis, "tp")))  # expect: bias
