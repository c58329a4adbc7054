"""c5: `jit(init, out_shardings=tree).eval_shape(...)` and `.lower(...).compile()` for sharded parameter trees."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("fsdp", "tp"))
D, F = 64, 256


def init(key):
    k1, k2 = jax.random.split(key)
    return jax.random.normal(k1, (D, F)), jax.random.normal(k2, (F, D))


shardings = (NamedSharding(mesh, P("fsdp", "tp")), NamedSharding(mesh, P("tp", "fsdp")))
init_fn = jax.jit(init, out_shardings=shardings)
w_in, w_out = init_fn(jax.random.key(0))  # expect: w_in, w_out
abstract_in, abstract_out = init_fn.eval_shape(jax.random.key(0))  # expect: abstract_in, abstract_out
