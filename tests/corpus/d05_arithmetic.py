"""d5: shapes from arithmetic: products, floor division, powers and `len(...)`."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

num_heads = 8
head_dim = 64
vocab = 32000
tp = 4
activations = ["relu", "gelu"]
intermediate_dim = 2**8

mesh = jax.make_mesh((2, tp), ("data", "model"))
attn = jax.device_put(jnp.zeros((512, num_heads * head_dim)), NamedSharding(mesh, P(None, "model")))  # expect: attn
shard = jax.device_put(jnp.zeros((vocab // tp, 16)), NamedSharding(mesh, P("data")))  # expect: shard
gates = jax.device_put(jnp.zeros((len(activations), intermediate_dim)), NamedSharding(mesh, P("data", "model")))  # expect: gates
half = jax.device_put(jnp.zeros(((head_dim + 2) // 2 - 1, 3 * 4)), NamedSharding(mesh, P("model", "data")))  # expect: half
