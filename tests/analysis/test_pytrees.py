"""`jax.tree.map` over known trees, and placements of pytrees (issue 12 §2: "pytrees and
tables", "a sharding as a pytree prefix in device_put"). Where a tree's structure is not known,
nothing is guessed."""

from __future__ import annotations

from analysis_helpers import analyze, site_named

HEADER = """
import jax, jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
params = {"w": jnp.ones((16, 32)), "b": jnp.ones((32,))}
"""


def test_tree_map_over_several_trees_and_with_is_leaf() -> None:
    analysis = analyze(
        HEADER
        + """
specs = {"w": P("data", "model"), "b": P("model")}
placed = jax.tree.map(lambda x, s: jax.device_put(x, NamedSharding(mesh, s)), params, specs)
w = jax.device_put(placed["w"], NamedSharding(mesh, P("model")))
nested = ((jnp.ones((8, 4)), jnp.ones((8,))),)
firsts = jax.tree.map(lambda t: t[0], nested, is_leaf=lambda t: isinstance(t, tuple) and len(t) == 2)
f = jax.device_put(firsts[0], NamedSharding(mesh, P("data")))
summed = jax.tree.map(lambda *xs: xs[0] + xs[1], params, params)
s = jax.device_put(summed["b"], NamedSharding(mesh, P("model")))
"""
    )
    assert site_named(analysis, "w").shard_shape == (4, 32)
    assert site_named(analysis, "f").shard_shape == (4, 4)
    assert site_named(analysis, "s").shard_shape == (8,)
    assert not analysis.diagnostics


def test_tree_map_over_an_unknown_or_mismatched_tree_is_unknown() -> None:
    analysis = analyze(
        HEADER
        + """
def load(state):
    doubled = jax.tree.map(lambda x: x * 2, {"w": state})
    return jax.device_put(doubled["w"], NamedSharding(mesh, P("data")))

mismatched = jax.tree.map(lambda x, y: x + y, params, {"w": jnp.ones((16, 32))})
m = jax.device_put(mismatched["w"], NamedSharding(mesh, P("data")))
"""
    )
    assert [s.shape for s in analysis.sites if s.name == "doubled"] in ([], [None])
    assert site_named(analysis, "m").shape is None


def test_a_tree_of_shardings_places_each_array_and_unknown_arrays_keep_their_sharding() -> None:
    analysis = analyze(
        HEADER
        + """
shardings = {"w": NamedSharding(mesh, P(None, "model")), "b": NamedSharding(mesh, P())}
placed = jax.device_put(params, shardings)

def restore(state):
    return jax.device_put(state, shardings)
"""
    )
    by_name = {(s.name, s.shape is None) for s in analysis.sites if s.kind.value == "device_put"}
    assert ("placed['w']", False) in by_name and ("placed['b']", False) in by_name
    assert site_named(analysis, "placed['w']").shard_shape == (16, 8)
    assert site_named(analysis, "placed['b']").shard_shape == (32,)
    restored = [s for s in analysis.sites if s.name and s.name.startswith("state")]
    assert restored and all(s.shape is None for s in restored)
    assert not analysis.diagnostics


def test_a_dict_comprehension_of_shardings_is_a_dict() -> None:
    analysis = analyze(
        HEADER
        + """
specs = {"w": P("data", None), "b": P("model")}
shardings = {name: NamedSharding(mesh, spec) for name, spec in specs.items() if name != "unused"}
w = jax.device_put(params["w"], shardings["w"])
def unrolled_over_unknown(names):
    by_name = {n: NamedSharding(mesh, P("data")) for n in names}
    return jax.device_put(params["w"], by_name["w"])
"""
    )
    assert site_named(analysis, "w").shard_shape == (8, 32)
    assert not any(s.name == "by_name" for s in analysis.sites)


def test_is_none_on_a_known_spec_is_decided() -> None:
    analysis = analyze(
        HEADER
        + """
specs = {"w": P("data", None), "b": P("model"), "scale": None}
kept = {name: NamedSharding(mesh, spec) for name, spec in specs.items() if spec is not None}
b = jax.device_put(params["b"], kept["b"])
unknown = {name: spec for name, spec in specs.items() if spec is not some_value}
"""
    )
    assert site_named(analysis, "b").shard_shape == (8,)
    assert not analysis.diagnostics


def test_trees_shared_by_reference_are_bounded() -> None:
    analysis = analyze(
        HEADER
        + """
x = jnp.ones((8,))
row = [x] * 1000
grid = [row] * 1000
halved = jax.tree.map(lambda a: a / 2, grid)
h = jax.device_put(halved[0][0], NamedSharding(mesh, P("data")))
placed = jax.device_put(grid, NamedSharding(mesh, P("data")))
grads = jax.grad(lambda g: 0.0)(grid)
"""
    )
    assert site_named(analysis, "h").shape is None
    assert not [s for s in analysis.sites if s.name and s.name.startswith("placed")]


def test_a_placed_tree_keeps_its_arrays_each_with_its_sharding() -> None:
    analysis = analyze(
        HEADER
        + """
shardings = {"b": NamedSharding(mesh, P()), "w": NamedSharding(mesh, P(None, "model"))}
placed = jax.device_put(params, shardings)
w = jax.device_put(placed["w"], NamedSharding(mesh, P("data")))
again = jax.lax.with_sharding_constraint(placed, NamedSharding(mesh, P("model")))
b = jax.device_put(again["b"], NamedSharding(mesh, P()))
pair = jax.device_put((jnp.ones((8, 4)), jnp.ones(6)), NamedSharding(mesh, P("data")))
first = jax.device_put(pair[0], NamedSharding(mesh, P(None, "model")))
z = jax.device_put(placed["w"], NamedSharding(mesh, P(None, ("data", "model"))))
bad = jax.device_put(placed["b"], NamedSharding(mesh, P("data", "model")))
"""
    )
    assert site_named(analysis, "w").shard_shape == (8, 32)
    assert site_named(analysis, "b").shape == (32,)
    assert site_named(analysis, "first").shard_shape == (8, 1)
    assert site_named(analysis, "z").shard_shape == (16, 4)
    assert [d.code for d in analysis.diagnostics] == ["SH002"]


def test_a_placed_tree_whose_structure_is_not_known_or_not_its_shardings_has_unknown_arrays() -> None:
    analysis = analyze(
        HEADER
        + """
missing = jax.device_put(params, {"w": NamedSharding(mesh, P())})
m = jax.device_put(missing["w"], NamedSharding(mesh, P("data")))
short = jax.device_put((jnp.ones(8), jnp.ones(8)), (NamedSharding(mesh, P()),))
s = jax.device_put(short[0], NamedSharding(mesh, P("data")))

def put(device, state):
    on_device = jax.device_put(params, device)
    d = jax.device_put(on_device["w"], NamedSharding(mesh, P("data")))
    leaves = jax.device_put({"w": state}, NamedSharding(mesh, P()))
    return jax.device_put(leaves["w"], NamedSharding(mesh, P("data")))
"""
    )
    assert site_named(analysis, "m").shape is None
    assert site_named(analysis, "s").shape is None
    on_device = site_named(analysis, "d")
    assert on_device.shape == (16, 32) and on_device.shard_shape == (8, 32)
    assert all(s.shape is None for s in analysis.sites if s.name and s.name.startswith("leaves"))
    assert not [d for d in analysis.diagnostics if d.severity.value == "error"]
