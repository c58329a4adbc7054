"""Errors with NNX logical names: a logical name with no rule (JAX: 'Resource axis ... not found'), and a typo in a rule."""
import jax
from flax import nnx
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
init = nnx.initializers.lecun_normal()
rules = (("embed", "data"), ("mlp", "model"))

with jax.set_mesh(mesh), nnx.logical_axis_rules(rules):
    ok = nnx.Linear(16, 32, kernel_init=nnx.with_partitioning(init, ("embed", "mlp")), use_bias=False, rngs=nnx.Rngs(0))  # expect: ok

with jax.set_mesh(mesh), nnx.logical_axis_rules(rules):
    unmapped = nnx.Linear(16, 32, kernel_init=nnx.with_partitioning(init, ("embed", "heads")), use_bias=False, rngs=nnx.Rngs(0))  # expect-error: SH205

typo_rules = (("embed", "data"), ("mlp", "modle"))
with jax.set_mesh(mesh), nnx.logical_axis_rules(typo_rules):
    typo = nnx.Linear(16, 32, kernel_init=nnx.with_partitioning(init, ("embed", "mlp")), use_bias=False, rngs=nnx.Rngs(0))  # expect-error: SH005
