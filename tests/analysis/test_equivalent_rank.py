"""A sharding compared at a stated rank (`is_equivalent_to(NamedSharding(...), ndim=2)`, flax
tests/nnx/spmd_test.py): its site has that rank, sizes unknown; a rank the spec does not fit in,
or one that is not a number here, gives none."""

from __future__ import annotations

from analysis_helpers import analyze

HEADER = """
import jax
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("row", "col"))
"""


def _shapes(source: str) -> list[list[str] | None]:
    analysis = analyze(HEADER + source)
    assert not analysis.diagnostics
    return [
        None if site.shard_shape is None else [getattr(d, "name", str(d)) for d in site.shard_shape]
        for site in analysis.sites
    ]


def test_the_rank_a_sharding_is_compared_at_is_its_sites_rank() -> None:
    assert _shapes(
        """
def check(model):
    assert model.kernel.sharding.is_equivalent_to(NamedSharding(mesh, P("row", "col")), ndim=2)
    assert model.bias.sharding.is_equivalent_to(NamedSharding(mesh, P()), 1)
    assert model.bias.sharding.is_equivalent_to(other=NamedSharding(mesh, P(None, "col")), ndim=3)
"""
    ) == [["d0/2", "d1/4"], ["d0"], ["d0", "d1/4", "d2"]]


def test_no_rank_when_the_spec_is_longer_or_the_rank_unknown_or_the_sharding_is_the_receiver() -> None:
    analysis = analyze(
        HEADER
        + """
def check(model, n):
    a = model.kernel.sharding.is_equivalent_to(NamedSharding(mesh, P("row", "col")), ndim=1)
    b = model.kernel.sharding.is_equivalent_to(NamedSharding(mesh, P("row")), ndim=n)
    c = NamedSharding(mesh, P("row")).is_equivalent_to(model.kernel.sharding, ndim=2)
    return a, b, c
"""
    )
    assert [site.shape for site in analysis.sites] == [None, None, None]
    assert not [d for d in analysis.diagnostics if d.severity.value == "error"]
