"""c4: `with_sharding_constraint` (Auto mesh, eager) with a NamedSharding or a bare P, and `reshard` (Explicit mesh)."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

auto = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
x = jnp.zeros((16, 32))
a = jax.lax.with_sharding_constraint(x, NamedSharding(auto, P("data", "model")))  # expect: a
with jax.set_mesh(auto):
    # (created under the mesh: an eager constraint with a bare P needs a NamedSharding input)
    h = jnp.zeros((16, 32))
    b = jax.lax.with_sharding_constraint(h, P(None, "model"))  # expect: b

explicit = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(explicit):
    y = jax.device_put(x, P("data"))
    c = jax.reshard(y, P("model", "data"))  # expect: c
    d = jax.sharding.reshard(y, P(None, ("data", "model")))  # expect: d
e = jax.reshard(x, NamedSharding(explicit, P("data", "model")))  # expect: e


def shard(x, spec):
    """A tunix/bonsai-style helper: constrain `x` to `spec` on the Auto mesh."""
    y = jax.lax.with_sharding_constraint(x, NamedSharding(auto, spec))  # expect: y
    return y


f = shard(jnp.ones((8, 8)), P("model"))
