"""d1/d2: literal shapes and module-level constants with arithmetic between them."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

D_EMB = 256
D_FF = 4 * D_EMB
BATCH = 32
SEQ = 16

mesh = jax.make_mesh((2, 4), ("data", "model"))
w_in = jax.device_put(jnp.zeros((D_EMB, D_FF)), NamedSharding(mesh, P(None, "model")))  # expect: w_in
w_out = jax.device_put(jnp.zeros((D_FF, D_EMB)), NamedSharding(mesh, P("model", None)))  # expect: w_out
acts = jax.device_put(jnp.zeros((BATCH, SEQ, D_EMB)), NamedSharding(mesh, P("data", None, "model")))  # expect: acts
lit = jax.device_put(jnp.zeros((128, 1024)), NamedSharding(mesh, P("data", "model")))  # expect: lit
