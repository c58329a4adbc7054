"""What EasyLM's training loop passes through `pjit` with `PS()`: a key split off a module-level
generator that a function sets with `global` (`init_rng` / `next_rng`), and metrics that are means
over every axis of arrays of unknown shape (issue #12: EasyLM had 1 of 32 sites resolved)."""

from __future__ import annotations

from analysis_helpers import analyze, site_named

HEADER = """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((8,), ("data",))
"""


def test_keys_split_and_unpacked_are_uint32_pairs() -> None:
    analysis = analyze(
        HEADER
        + """
key = jax.random.PRNGKey(0)
k1, k2 = jax.random.split(key)
placed = jax.device_put(k2, NamedSharding(mesh, P()))
"""
    )
    site = site_named(analysis, "placed")
    assert site.shard_shape == (2,)
    assert site.dtype is not None and site.dtype.name == "uint32"


def test_a_global_set_by_a_function_is_what_it_assigns() -> None:
    analysis = analyze(
        HEADER
        + """
def init_mesh(rows):
    global shared_mesh
    shared_mesh = jax.make_mesh((rows, 8 // rows), ("data", "model"))

def init_rng(seed):
    global shared_rng
    shared_rng = jax.random.PRNGKey(seed)

init_mesh(4)
init_rng(0)
key = jax.device_put(shared_rng, NamedSharding(mesh, P()))
rows = jax.device_put(jnp.zeros((8, 2)), NamedSharding(shared_mesh, P("data")))
"""
    )
    assert site_named(analysis, "key").shard_shape == (2,)
    assert site_named(analysis, "rows").shape is not None
    rows_mesh = site_named(analysis, "rows").mesh  # the function's argument is not known there
    assert rows_mesh is None or rows_mesh.fallback


def test_a_name_nobody_binds_stays_unknown() -> None:
    analysis = analyze(
        HEADER
        + """
def next_rng():
    return shared_rng()

placed = jax.device_put(next_rng(), NamedSharding(mesh, P()))
"""
    )
    assert site_named(analysis, "placed").shape is None


def test_a_mean_over_every_axis_of_an_unknown_array_is_a_scalar() -> None:
    analysis = analyze(
        HEADER
        + """
def metrics(logits):
    loss = jax.device_put(jnp.mean(logits), NamedSharding(mesh, P()))
    rows = jax.device_put(jnp.mean(logits, axis=-1), NamedSharding(mesh, P()))
    kept = jax.device_put(jnp.sum(logits, keepdims=True), NamedSharding(mesh, P()))
    return loss, rows, kept
"""
    )
    assert site_named(analysis, "loss").shard_shape == ()
    assert site_named(analysis, "rows").shape is None
    assert site_named(analysis, "kept").shape is None
