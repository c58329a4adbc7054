"""Logical rules that Flax rejects: an unmapped logical name, a name inside a tuple entry (not
renamed), and context and per-variable rules that disagree (also a tuple against a name)."""

import jax
from flax import nnx
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
wp = nnx.with_partitioning
init = nnx.initializers.zeros_init()
rules = [("embed", "data"), ("mlp", "model")]

with jax.set_mesh(mesh), nnx.logical_axis_rules(rules):
    fine = nnx.Linear(64, 32, kernel_init=wp(init, ("embed", "mlp")), rngs=nnx.Rngs(0))  # expect: fine
with jax.set_mesh(mesh), nnx.logical_axis_rules(rules):
    unmapped = nnx.Linear(
        64, 32, kernel_init=wp(init, ("embed", "hidden")), rngs=nnx.Rngs(0)
    )  # expect-error: SH205
with jax.set_mesh(mesh), nnx.logical_axis_rules(rules):
    nested = nnx.Linear(
        64, 32, kernel_init=wp(init, (("embed", "mlp"), None)), rngs=nnx.Rngs(0)
    )  # expect-error: SH205
with jax.set_mesh(mesh), nnx.logical_axis_rules(rules):
    conflict = nnx.Linear(
        64, 32, kernel_init=wp(init, ("embed", "mlp"), sharding_rules=[("embed", "model")]), rngs=nnx.Rngs(0)
    )  # expect-error: SH206
with jax.set_mesh(mesh), nnx.logical_axis_rules(rules):
    shapes = nnx.Linear(
        64,
        32,
        kernel_init=wp(init, ("embed", "mlp"), sharding_rules=[("embed", ("data",))]),
        rngs=nnx.Rngs(0),
    )  # expect-error: SH206
