"""A slice whose bounds are not known keeps its axis (llama3 main.py's `next_tokens.at[:,
cache.iter - 1 : cache.iter].get(...)`, `tokens[1:n]`): the rank stands, the size of that
dimension is not known. tests/corpus/r87_slices_of_unknown_bounds.py runs the error under JAX."""

from __future__ import annotations

from analysis_helpers import analyze, site_named

from shardls.analysis.facts import SymbolicDim

SOURCE = """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("x", "y"))

def step(tokens, cache):
    current = tokens.at[:, cache.iter - 1 : cache.iter].get(out_sharding=NamedSharding(mesh, P("x", None)))
    rows = jax.device_put(tokens[1 : cache.n], NamedSharding(mesh, P(None, "y")))
    stepped = jax.device_put(tokens[0 : cache.n : 2], NamedSharding(mesh, P(None, "y")))
    return current, rows, stepped

step(jnp.zeros((8, 16), jnp.int32), object())
"""


def _known(shape: object) -> list[object]:
    return [d if isinstance(d, int) else None for d in shape]  # type: ignore[attr-defined]


def test_a_slice_of_unknown_bounds_keeps_the_rank() -> None:
    analysis = analyze(SOURCE)
    current = site_named(analysis, "current")
    assert current.shape is not None and _known(current.shape) == [8, None]
    assert isinstance(current.shape[1], SymbolicDim)
    rows = site_named(analysis, "rows")
    assert rows.shape is not None and _known(rows.shape) == [None, 16]
    assert rows.shard_shape is not None and rows.shard_shape[1] == 4
    assert not analysis.diagnostics


def test_a_step_not_written_only() -> None:
    """`x[a:b:2]` with a bound not known is left unknown: only the plain window is read."""
    assert site_named(analyze(SOURCE), "stepped").shape is None
