"""Array dimensions sized by the device count (`len(jax.devices())`, `jax.device_count()`,
`jax.local_device_count()`): the size is shardls's default device count unless one is stated,
so a problem it decides is a warning naming that assumption, and an error once it is stated."""

from __future__ import annotations

import pytest
from analysis_helpers import analyze, site_named

from shardls.analysis.facts import SymbolicDim
from shardls.analysis.settings import Settings
from shardls.core import Severity

HEAD = """
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
"""

COUNTS = ["len(jax.devices())", "jax.device_count()", "jax.local_device_count()", "len(jax.local_devices())"]


@pytest.mark.parametrize("count", COUNTS)
def test_a_dimension_from_the_device_count_is_the_default_count(count: str) -> None:
    analysis = analyze(
        HEAD + f"x = jax.device_put(jnp.zeros(({count}, 6)), NamedSharding(mesh, P('model')))\n"
    )
    site = site_named(analysis, "x")
    assert site.shape == (8, 6)
    assert site.layout is not None and site.layout.shard_shape == (2, 6)
    assert any("default device count" in line for line in site.provenance)
    assert analysis.diagnostics == ()


@pytest.mark.parametrize("count", COUNTS)
def test_a_problem_it_decides_is_a_warning_naming_the_assumption(count: str) -> None:
    source = HEAD + f"x = jax.device_put(jnp.zeros(({count} - 1, 6)), NamedSharding(mesh, P('model')))\n"
    assumed = analyze(source)
    assert [(d.code, d.severity) for d in assumed.diagnostics] == [("SH001", Severity.WARNING)]
    assert "default device count" in assumed.diagnostics[0].assumptions[0]
    stated = analyze(source, Settings(device_count=8))
    assert [(d.code, d.severity) for d in stated.diagnostics] == [("SH001", Severity.ERROR)]


def test_the_length_of_a_device_array_of_an_unknown_shape_stays_unknown() -> None:
    analysis = analyze(
        HEAD
        + "import numpy as np\n"
        + "grid = np.array(jax.devices()).reshape(shape)\n"
        + "x = jax.device_put(jnp.zeros((len(grid), 6)), NamedSharding(mesh, P('model')))\n"
    )
    first = (site_named(analysis, "x").shape or ())[0]
    assert isinstance(first, SymbolicDim)
    assert analysis.diagnostics == ()


@pytest.mark.parametrize(
    "size", ["grid.size", "grid.shape['d']", "grid.axis_sizes[0]", "np.array(jax.devices()).size"]
)
def test_a_size_read_from_a_mesh_sized_by_the_device_count_carries_the_assumption(size: str) -> None:
    source = (
        HEAD
        + "import numpy as np\n"
        + "grid = jax.make_mesh((jax.device_count(),), ('d',))\n"
        + f"x = jax.device_put(jnp.zeros(({size} + 2, 6)), NamedSharding(mesh, P('model')))\n"
    )
    assumed = analyze(source)
    assert site_named(assumed, "x").shape == (10, 6)
    assert [(d.code, d.severity) for d in assumed.diagnostics] == [("SH001", Severity.WARNING)]
    stated = analyze(source, Settings(device_count=8))
    assert [(d.code, d.severity) for d in stated.diagnostics] == [("SH001", Severity.ERROR)]


def test_a_size_read_from_a_literal_mesh_is_a_fact() -> None:
    analysis = analyze(
        HEAD + "x = jax.device_put(jnp.zeros((mesh.size + 2, 6)), NamedSharding(mesh, P('model')))\n"
    )
    assert [(d.code, d.severity) for d in analysis.diagnostics] == [("SH001", Severity.ERROR)]
