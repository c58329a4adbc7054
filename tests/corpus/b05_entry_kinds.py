"""b5: every kind of spec entry: string, None, empty, variable, starred, subscript, tuple, attribute, if-expression."""
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


class Axes:
    batch = "data"
    hidden = "model"


mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jnp.zeros((8, 16, 4))
data_axis = "data"
names = ["data", "model"]
use_tp = True

s_string = jax.device_put(x, NamedSharding(mesh, P("data")))  # expect: s_string
s_none = jax.device_put(x, NamedSharding(mesh, P(None, "model")))  # expect: s_none
s_empty = jax.device_put(x, NamedSharding(mesh, P()))  # expect: s_empty
s_variable = jax.device_put(x, NamedSharding(mesh, P(data_axis, None)))  # expect: s_variable
s_starred = jax.device_put(x, NamedSharding(mesh, P(*names)))  # expect: s_starred
s_subscript = jax.device_put(x, NamedSharding(mesh, P(names[1])))  # expect: s_subscript
s_tuple = jax.device_put(x, NamedSharding(mesh, P(None, ("data", "model"))))  # expect: s_tuple
s_attribute = jax.device_put(x, NamedSharding(mesh, P(Axes.batch, Axes.hidden)))  # expect: s_attribute
s_ifexp = jax.device_put(x, NamedSharding(mesh, P(None, "model" if use_tp else None)))  # expect: s_ifexp
s_list = jax.device_put(x, NamedSharding(mesh, P(["data", "model"])))  # expect: s_list
s_unit = jax.device_put(x, NamedSharding(mesh, P(("model",), (), None)))  # expect: s_unit
