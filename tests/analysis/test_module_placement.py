"""An NNX module placed whole: `reshard(emb, P("X"))` (flax tests/nnx/spmd_test.py),
`jax.device_put(model, sharding)`. A module is a pytree whose leaves are its variables, so JAX
places each of them: one site per variable, as `nnx.state(module)` lists them. The shapes below
are what Flax 0.12 / JAX 0.10 give on 8 CPU devices."""

from __future__ import annotations

from analysis_helpers import analyze

HEADER = """
import jax, jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P, reshard

mesh = jax.make_mesh((2, 2), ("X", "Y"), axis_types=(AxisType.Explicit, AxisType.Explicit))

class MLP(nnx.Module):
    def __init__(self, rngs):
        self.up = nnx.Linear(4, 8, rngs=rngs)
        self.down = nnx.Linear(8, 4, use_bias=False, rngs=rngs)
"""


def _layouts(source: str) -> dict[str, object]:
    analysis = analyze(HEADER + source)
    assert not analysis.diagnostics or all(d.code == "SH107" for d in analysis.diagnostics)
    return {s.name: s.shard_shape for s in analysis.sites if s.name is not None and "[" in s.name}


def test_a_layer_resharded_whole_places_each_parameter() -> None:
    assert _layouts(
        """
with jax.set_mesh(mesh):
    emb = nnx.Embed(num_embeddings=8, features=4, rngs=nnx.Rngs(0))
    emb = reshard(emb, P("X"))
"""
    ) == {"emb['embedding']": (4, 4)}


def test_a_module_put_on_devices_places_every_variable_by_path() -> None:
    assert _layouts(
        """
with jax.set_mesh(mesh):
    model = jax.device_put(MLP(nnx.Rngs(1)), P("X"))
"""
    ) == {
        "model['down']['kernel']": (4, 4),
        "model['up']['bias']": (4,),
        "model['up']['kernel']": (2, 8),
    }


def test_an_object_that_is_not_a_module_is_not_a_tree_of_variables() -> None:
    analysis = analyze(
        HEADER
        + """
class Config:
    def __init__(self):
        self.size = 4

with jax.set_mesh(mesh):
    cfg = jax.device_put(Config(), P("X"))
"""
    )
    assert [s.name for s in analysis.sites if s.name is not None and s.name.startswith("cfg")] in (
        [],
        ["cfg"],
    )
