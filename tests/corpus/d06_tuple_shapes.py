"""d6: shapes built as tuples in code: concatenation (maxtext `in_features_shape + out_features_shape`), packing, `.shape`."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

embed, heads, head_dim = 64, 8, 16
mesh = jax.make_mesh((2, 4), ("fsdp", "tp"))

in_features_shape = (embed,)
out_features_shape = (heads, head_dim)
kernel_shape = in_features_shape + out_features_shape
kernel = jax.device_put(jnp.zeros(kernel_shape), NamedSharding(mesh, P("fsdp", "tp")))  # expect: kernel

qkv_shape = (3, embed, heads, head_dim)
qkv = jax.device_put(jnp.zeros(qkv_shape), NamedSharding(mesh, P(None, "fsdp", "tp")))  # expect: qkv

like = jax.device_put(jnp.zeros(kernel.shape), NamedSharding(mesh, P(None, None, "tp")))  # expect: like
flat = jax.device_put(jnp.zeros(kernel_shape).reshape(embed, heads * head_dim), NamedSharding(mesh, P("fsdp", "tp")))  # expect: flat
batch_shape = (4, *out_features_shape)
acts = jax.device_put(jnp.zeros(batch_shape), NamedSharding(mesh, P(None, "tp")))  # expect: acts
