"""Real code (jax_privacy `tests/distributed_noise_generation_test.py`, Optax and Octo's
`params = jax.device_put(params, shardings)`): a dict of parameters placed whole, then placed or
used again by leaf.

A placement of a pytree gave sites for each leaf, but its result had no known leaves: the second
`reshard` of the same dict, and everything read from it afterwards, had unknown shapes. JAX
places each array by the sharding its shardings tree (a prefix of the arrays' tree) gives it, so
the leaves keep their shapes.
"""
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
jax.sharding.set_mesh(mesh)

pspecs = {
    "v": P(),
    "w": P(None, "x"),
    "z": P("y", None),
}
model_params = {
    "v": jnp.array(123.456),
    "w": jnp.zeros((4, 8)),
    "z": jnp.ones((2, 7)),
}
model_params = jax.sharding.reshard(model_params, pspecs)
model_params = jax.sharding.reshard(model_params, pspecs)
w_rows = jax.sharding.reshard(model_params["w"], P("x", None))  # expect: w_rows

shardings = {
    "z": NamedSharding(mesh, P(None, None)),
    "w": NamedSharding(mesh, P("y", "x")),
    "v": NamedSharding(mesh, P()),
}
placed = jax.device_put(model_params, shardings)
w_both = jax.device_put(placed["w"], NamedSharding(mesh, P(None, ("x", "y"))))  # expect: w_both

pair = jax.device_put((jnp.zeros((4, 8)), jnp.ones(6)), NamedSharding(mesh, P("y")))
first = jax.device_put(pair[0], NamedSharding(mesh, P(None, ("x", "y"))))  # expect: first

z_cols = jax.device_put(placed["z"], NamedSharding(mesh, P(None, "x")))  # expect-error: SH001
