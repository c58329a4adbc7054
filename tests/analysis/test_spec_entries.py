"""A PartitionSpec taken apart by index or slice (maxtext `P(activation_pspec[0], None)`,
jax-llm-examples `P(*(out_spec[:-1] + (axis,)))`): each entry is the entry JAX gives, an entry the
spec could not resolve stays unknown, and a spec with reduced or unreduced axes, on which JAX's
`__getitem__` raises, gives nothing."""

from __future__ import annotations

import pytest
from analysis_helpers import analyze, site_named

HEADER = """
import jax, numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "fsdp"))
spec = P(("data", "fsdp"), None, "fsdp")
"""


def _site(expression: str, extra: str = ""):
    analysis = analyze(
        HEADER + extra + f"x = jax.device_put(np.zeros((16, 8)), NamedSharding(mesh, {expression}))\n"
    )
    assert not [d for d in analysis.diagnostics if d.severity.value == "error"]
    return site_named(analysis, "x")


@pytest.mark.parametrize(
    ("expression", "entries", "shard"),
    [
        ("P(spec[0], None)", (("data", "fsdp"), None), (2, 8)),
        ("P(spec[-3], spec[1])", (("data", "fsdp"), None), (2, 8)),
        ("P(spec[2], spec[0][0])", ("fsdp", "data"), (4, 4)),
        ("P(*spec[:-1])", (("data", "fsdp"), None), (2, 8)),
    ],
)
def test_an_entry_read_by_index_or_slice_is_the_specs_entry(
    expression: str, entries: tuple[object, ...], shard: tuple[int, int]
) -> None:
    site = _site(expression)
    assert site.spec is not None and site.spec.entries == entries
    assert site.layout is not None and site.layout.shard_shape == shard
    assert not site.assumptions


def test_an_entry_the_spec_does_not_know_stays_unknown_by_index_and_by_slice() -> None:
    extra = "def f(axis):\n    return P(axis, None)\nunknown = f(object())\n"
    by_index = _site("P(unknown[0], None)", extra)
    by_slice = _site("P(*unknown[:1], None)", extra)
    for site in (by_index, by_slice):
        assert any("spec entry 0 unknown" in a for a in site.assumptions), site.assumptions


@pytest.mark.parametrize("expression", ["P(spec[5], None)", "P(reduced[0], None)"])
def test_an_index_jax_rejects_gives_no_entry(expression: str) -> None:
    """Out of range is an IndexError; any index of a spec with reduced axes a ValueError (JAX 0.10)."""
    site = _site(expression, 'reduced = P("data", None, reduced={"fsdp"})\n')
    assert any("spec entry 0 unknown" in a for a in site.assumptions), site.assumptions


def test_a_slice_of_a_spec_with_reduced_axes_gives_no_spec() -> None:
    analysis = analyze(
        HEADER
        + 'reduced = P("data", None, reduced={"fsdp"})\n'
        + "x = jax.device_put(np.zeros((16, 8)), NamedSharding(mesh, P(*reduced[:1], None)))\n"
    )
    assert not [s for s in analysis.sites if s.name == "x"]
    assert not analysis.diagnostics
