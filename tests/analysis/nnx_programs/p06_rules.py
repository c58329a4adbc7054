"""NNX logical axis rules: the context merged with per-variable `sharding_rules=`, tuple and None
targets, mesh axes passing through, and a duplicate rule (the last one wins, as in a dict), also
under Linen's `nn.logical_axis_rules` (the same context: NNX still reads it as a dict)."""

import flax.linen as nn
import jax
from flax import nnx
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
wp = nnx.with_partitioning
init = nnx.initializers.zeros_init()
rules = [("embed", "data"), ("mlp", "model"), ("heads", ("data", "model")), ("vocab", None)]

with jax.set_mesh(mesh), nnx.logical_axis_rules(rules):
    up = nnx.Linear(
        64,
        256,
        kernel_init=wp(init, ("embed", "mlp")),
        bias_init=wp(nnx.initializers.zeros_init(), ("mlp",)),
        rngs=nnx.Rngs(0),
    )  # expect: up
    heads = nnx.Linear(16, 64, kernel_init=wp(init, (None, "heads")), rngs=nnx.Rngs(0))  # expect: heads
    table = nnx.Embed(
        1000,
        64,
        embedding_init=init,
        embedding_metadata={"out_sharding": ("vocab", "embed")},
        rngs=nnx.Rngs(0),
    )  # expect: table
    mixed = nnx.Linear(64, 32, kernel_init=wp(init, ("embed", "model")), rngs=nnx.Rngs(0))  # expect: mixed
    local = nnx.Linear(
        64, 32, kernel_init=wp(init, ("embed", "kv"), sharding_rules=[("kv", ["model"])]), rngs=nnx.Rngs(0)
    )  # expect: local
    agree = nnx.Linear(
        64, 32, kernel_init=wp(init, ("embed", "mlp"), sharding_rules=[("embed", "data")]), rngs=nnx.Rngs(0)
    )  # expect: agree

with jax.set_mesh(mesh):
    per_variable = nnx.Linear(
        64,
        32,
        kernel_init=wp(init, ("embed", "mlp"), sharding_rules=(("embed", "model"), ("mlp", None))),
        rngs=nnx.Rngs(0),
    )  # expect: per_variable
    with nn.logical_axis_rules([("embed", "data"), ("mlp", "model"), ("embed", "model"), ("mlp", "data")]):
        last_wins = nnx.Linear(
            64, 32, kernel_init=wp(init, ("embed", "mlp")), rngs=nnx.Rngs(0)
        )  # expect: last_wins
