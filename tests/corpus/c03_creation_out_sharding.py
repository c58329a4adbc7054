"""c3: creation with `out_sharding=` (a bare P under `set_mesh`, Explicit axes) or `device=` (NamedSharding)."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
zeros = jnp.zeros((8, 16), device=NamedSharding(mesh, P("data", "model")))  # expect: zeros
ones = jnp.ones((4, 4), dtype=jnp.bfloat16, device=NamedSharding(mesh, P(None, "model")))  # expect: ones

with jax.set_mesh(mesh):
    a = jnp.zeros((16, 32), out_sharding=P("data"))  # expect: a
    b = jnp.ones((16, 32), jnp.float32, out_sharding=P("model", "data"))  # expect: b
    c = jnp.full((8, 8), 3.0, out_sharding=P(None, "model"))  # expect: c
    d = jnp.zeros_like(a, out_sharding=P(None, ("data", "model")))  # expect: d
    e = jax.random.normal(jax.random.key(0), (8, 12), out_sharding=P("data"))  # expect: e
