"""A `shard_map`ped function called with arrays whose rank is known but not every size, or on a
mesh not known (jax-llm-examples' MoE `_expert_fn(x_, ...)` on `cfg.mesh`): its blocks keep the
arguments' ranks, so a body that ends in a reshape, a `psum` of one of two branches' values or a
`scatter_add` gives its output site that rank, one layout per value the body may return.
tests/corpus/r86_moe_expert_collectives.py runs the same operations with known shapes under JAX."""

from __future__ import annotations

from analysis_helpers import analyze, site_named

HEADER = """
from functools import partial
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
"""


def _ranks(analysis: object, name: str) -> list[int | None]:
    sites = [s for s in analysis.sites if s.name == name]  # type: ignore[attr-defined]
    return sorted((-1 if s.shape is None else len(s.shape)) for s in sites)  # type: ignore[misc]


def test_blocks_keep_the_rank_on_a_mesh_not_known() -> None:
    analysis = analyze(
        HEADER
        + """
def moe(x, cfg):
    b, s, d = x.shape

    @partial(jax.shard_map, mesh=cfg.mesh, in_specs=P("x", None, None), out_specs=P("x", None, None))
    def _expert_fn(x):
        flat = x.reshape((-1, x.shape[-1]))
        if cfg.prefill:
            out = jax.lax.scatter_add(jnp.zeros_like(flat), jnp.zeros((3, 1), jnp.int32), flat[:3], cfg.dims)
        else:
            out = jnp.einsum("Td,Td->Td", flat, flat)
        out = jax.lax.psum(out, "y")
        return out.reshape((-1, x.shape[1], out.shape[-1]))

    return _expert_fn(x)
"""
    )
    (out,) = [s for s in analysis.sites if s.kind.value == "shard_map_out"]
    assert out.shape is not None and len(out.shape) == 3
    assert any("rank 3" in a for a in out.assumptions)  # the unpacking fixes x's rank
    block = [s for s in analysis.sites if s.kind.value == "shard_map_in"]
    assert [len(s.shape) for s in block if s.shape is not None] == [3]
    assert not analysis.diagnostics


def test_an_output_gets_a_layout_per_value_the_body_may_return() -> None:
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((2, 4), ("x", "y"))

@partial(jax.shard_map, mesh=mesh, in_specs=P("x", None), out_specs=P("x", None))
def pick(a):
    if a.flag:
        out = a.unknown_method()
    else:
        out = a * 2
    return out

picked = pick(jnp.ones((8, 16)))
"""
    )
    shapes = sorted(str(s.shape) for s in analysis.sites if s.kind.value == "shard_map_out")
    assert shapes == ["(8, 16)", "None"]


def test_updates_and_scatters_of_an_unknown_operand() -> None:
    """`dynamic_update_slice(_in_dim)` raises unless the update has the operand's rank; a
    scatter's value has the operand's shape (and no layout is claimed for it)."""
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((2, 4), ("x", "y"))
def update(cache, k, numbers):
    new = jax.lax.dynamic_update_slice_in_dim(cache.k, k, 0, axis=2)
    one = jax.device_put(new, NamedSharding(mesh, P("x")))
    row = jax.lax.dynamic_update_index_in_dim(cache.k, k[0], 0, axis=0)
    two = jax.device_put(row, NamedSharding(mesh, P("x")))
    summed = jax.lax.scatter_add(jnp.zeros((8, 4)), numbers, jnp.ones((3, 4)), cache.dims)
    three = jax.device_put(summed, NamedSharding(mesh, P("x")))
    return one, two, three

update(object(), jnp.ones((2, 4, 8, 16)), object())
"""
    )
    assert _ranks(analysis, "one") == [4]
    assert site_named(analysis, "two").shape is None  # the update may be one dimension short
    assert site_named(analysis, "three").shape == (8, 4)
    assert not analysis.diagnostics


def test_a_value_the_body_may_return_is_not_rejected() -> None:
    """One branch returns a block that varies over `x`, which `out_specs=P()` does not allow:
    were it the value, JAX would reject the call; which branch runs is not known, so each is a
    layout shown, not an error."""
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((2, 4), ("x", "y"))

@partial(jax.shard_map, mesh=mesh, in_specs=P("x", None), out_specs=P())
def pick(a):
    if a.flag:
        out = jax.lax.psum(a, "x")
    else:
        out = a * 2
    return out

placed = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("x")))
picked = pick(placed)
"""
    )
    assert sorted(str(s.shape) for s in analysis.sites if s.kind.value == "shard_map_out") == ["(4, 16)"]
    assert not [d for d in analysis.diagnostics if d.severity.value == "error"]
