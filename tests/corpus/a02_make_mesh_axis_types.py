"""a2: `make_mesh` with axis types: a keyword tuple, `(AxisType.Auto,) * len(...)`, or a positional third argument."""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

names = ("data", "model")
explicit = jax.make_mesh((2, 4), names, axis_types=(AxisType.Explicit,) * 2)
auto = jax.make_mesh((4, 2), names, axis_types=(AxisType.Auto,) * len(names))
positional = jax.make_mesh((8,), ("fsdp",), (AxisType.Explicit,))

x = jnp.zeros((16, 32))
a = jax.device_put(x, NamedSharding(explicit, P("data", "model")))  # expect: a
b = jax.device_put(x, NamedSharding(auto, P("data", "model")))  # expect: b
c = jax.device_put(x, NamedSharding(positional, P(None, "fsdp")))  # expect: c

with jax.set_mesh(explicit):
    d = jax.device_put(x, P("model"))  # expect: d
    e = jax.reshard(d, P(None, ("data", "model")))  # expect: e

with jax.set_mesh(auto):
    f = jax.device_put(x, P("model", "data"))  # expect: f
