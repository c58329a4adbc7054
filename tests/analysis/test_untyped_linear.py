"""`nnx.Linear` called where its input has no sharded type (Auto axes, a `shard_map` block):
the result's shape and dtype as Flax computes them (`sharded/layers.untyped_linear_call`)."""

from __future__ import annotations

from analysis_helpers import analyze, site_named

from shardls.analysis.facts import SiteKind

_HEAD = """
import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.sharding.Mesh(jax.devices(), ('data',))
"""


def _placed(layer: str, x: str) -> tuple[object, object]:
    """Shape and dtype of `layer(x)` placed by device_put (None: the dtype is not known, and the
    site names the dtype its bytes assume)."""
    analysis = analyze(
        _HEAD
        + f"""
layer = {layer}
y = jax.device_put(layer({x}), NamedSharding(mesh, P('data')))
"""
    )
    site = site_named(analysis, "y")
    unknown = any(note.startswith("dtype not known here") for note in site.assumptions)
    return site.shape, None if unknown else site.dtype


def test_the_last_size_becomes_out_features() -> None:
    shape, dtype = _placed("nnx.Linear(4, 6, rngs=nnx.Rngs(0))", "jnp.ones((16, 8, 4))")
    assert shape == (16, 8, 6)
    assert dtype is not None and dtype.name == "float32"


def test_a_half_precision_input_gives_float32_with_the_float32_kernel() -> None:
    shape, dtype = _placed("nnx.Linear(4, 6, rngs=nnx.Rngs(0))", "jnp.ones((16, 4), jnp.bfloat16)")
    assert shape == (16, 6)
    assert dtype is not None and dtype.name == "float32"


def test_dtype_given_is_the_result_dtype() -> None:
    shape, dtype = _placed("nnx.Linear(4, 6, dtype=jnp.bfloat16, rngs=nnx.Rngs(0))", "jnp.ones((16, 4))")
    assert shape == (16, 6)
    assert dtype is not None and dtype.name == "bfloat16"


def test_a_param_dtype_leaves_the_dtype_unknown_not_the_shape() -> None:
    shape, dtype = _placed(
        "nnx.Linear(4, 6, param_dtype=jnp.bfloat16, rngs=nnx.Rngs(0))", "jnp.ones((16, 4), jnp.bfloat16)"
    )
    assert shape == (16, 6)
    assert dtype is None


def test_an_input_of_another_last_size_gives_nothing() -> None:
    """JAX raises in `dot_general`: no shape, and no error of shardls's own."""
    analysis = analyze(
        _HEAD
        + """
layer = nnx.Linear(4, 6, rngs=nnx.Rngs(0))
y = jax.device_put(layer(jnp.ones((16, 5))), NamedSharding(mesh, P('data')))
"""
    )
    assert site_named(analysis, "y").shape is None
    assert not [d for d in analysis.diagnostics if d.severity.name == "ERROR"]


def test_an_unmodelled_constructor_argument_gives_nothing() -> None:
    shape, _ = _placed("nnx.Linear(4, 6, rngs=nnx.Rngs(0), dot_general=my_dot)", "jnp.ones((16, 4))")
    assert shape is None


def test_a_layer_passed_whole_to_an_nnx_shard_map() -> None:
    """flax `transforms_test.py`: `return m(x)` in the body; the output is the blocks' concatenation."""
    analysis = analyze(
        _HEAD
        + """
with jax.set_mesh(mesh):
    m = nnx.Linear(in_features=2, out_features=3, rngs=nnx.Rngs(0))

@nnx.shard_map(mesh=mesh, in_specs=(P(None), P('data')), out_specs=P('data'))
def f(m, x):
    return m(x)

y = f(m, jnp.ones((32, 2)))
"""
    )
    outputs = [s for s in analysis.sites if s.kind is SiteKind.SHARD_MAP_OUT]
    assert [(s.name, s.shape, s.shard_shape) for s in outputs] == [("y", (32, 3), (4, 3))]
