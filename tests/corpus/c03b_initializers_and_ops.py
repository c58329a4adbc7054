"""c3: `out_sharding` through initializers (4th positional), `.at[...].get`, `einsum` and `dot` (Explicit mode)."""
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    key = jax.random.key(0)
    w = jax.nn.initializers.he_normal()(key, (16, 32), jnp.float32, P(None, "model"))  # expect: w
    x = jnp.zeros((8, 16), out_sharding=P("data"))  # expect: x
    y = jnp.einsum("bd,df->bf", x, w, out_sharding=P("data", "model"))  # expect: y
    z = jnp.dot(x, w, out_sharding=P("data", None))  # expect: z
    head = x.at[0:4].get(out_sharding=P(None, "model"))  # expect: head
