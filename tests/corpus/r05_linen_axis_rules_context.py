"""Real code (MaxText tests/unit/sharding_nnx_test.py): `flax.linen.partitioning.axis_rules` with NNX.

Inside `nn_partitioning.axis_rules(rules)` an `nnx.Param`'s logical `out_sharding` names are
mapped through the rules before they meet the mesh: 'embed' -> 'fsdp', 'layers' -> 'stage'.
"""
import jax
import jax.numpy as jnp
from flax import nnx
from flax.linen import partitioning as nn_partitioning

mesh = jax.make_mesh((2, 4), ("fsdp", "stage"))
rules = (("embed", "fsdp"), ("layers", "stage"))

with jax.set_mesh(mesh), nn_partitioning.axis_rules(rules):
    v = nnx.Param(jnp.zeros((4, 8)), out_sharding=("embed", "layers"))  # expect: v
    first_wins = nnx.Param(jnp.zeros((6,)), out_sharding=("embed",))  # expect: first_wins
