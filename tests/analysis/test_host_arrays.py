"""Arrays made sharded from host data (`shardls/analysis/library/sharding.py`,
`recognizers/placement.py`): `make_array_from_callback` and `make_array_from_single_device_arrays`
take their global shape from their first argument and are checked as `shard_shape` checks; `make_array_from_process_local_data` is a
`device_put` of the local data on one process, whose shape is the global one only there."""

from __future__ import annotations

from analysis_helpers import analyze, site_named

from shardls.analysis.facts import FileAnalysis, SiteKind
from shardls.analysis.library.sharding import ONE_PROCESS
from shardls.core import Severity, UsageContext

HEAD = """
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
auto = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))
sharding = NamedSharding(mesh, P("data", "model"))
"""


def problems(analysis: FileAnalysis) -> list[tuple[str, Severity]]:
    return [(d.code, d.severity) for d in analysis.diagnostics]


def test_a_callback_array_has_the_shape_of_its_first_argument() -> None:
    analysis = analyze(HEAD + "w = jax.make_array_from_callback((8, 12), sharding, lambda i: None)\n")
    site = site_named(analysis, "w")
    assert site.kind is SiteKind.CREATION
    assert site.context is UsageContext.SHARD_SHAPE
    assert site.shape == (8, 12)
    assert site.layout is not None and site.layout.shard_shape == (4, 3)
    assert problems(analysis) == []


def test_a_callback_array_takes_its_dtype_from_dtype_and_its_shape_from_an_array() -> None:
    analysis = analyze(
        HEAD
        + "val = jnp.zeros((4, 8), jnp.bfloat16)\n"
        + "w = jax.make_array_from_callback(val.shape, sharding, lambda i: val[i], dtype=jnp.int8)\n"
    )
    site = site_named(analysis, "w")
    assert site.shape == (4, 8)
    assert site.dtype is not None and site.dtype.name == "int8"


def test_a_callback_array_of_an_unknown_shape_stays_symbolic() -> None:
    analysis = analyze(
        HEAD
        + "def make(val):\n"
        + "    w = jax.make_array_from_callback(val.shape, sharding, lambda i: val[i])\n"
        + "    return w\n"
    )
    assert site_named(analysis, "w").shape is None
    assert problems(analysis) == []


def test_a_callback_checks_divisibility_and_unconstrained_as_shard_shape_does() -> None:
    indivisible = analyze(HEAD + "w = jax.make_array_from_callback((5, 12), sharding, lambda i: None)\n")
    assert problems(indivisible) == [("SH001", Severity.ERROR)]
    explicit = analyze(
        HEAD + "w = jax.make_array_from_callback((8,), NamedSharding(mesh, P(P.UNCONSTRAINED)), f)\n"
    )
    assert problems(explicit) == [("SH006", Severity.ERROR)]
    on_auto = analyze(
        HEAD + "w = jax.make_array_from_callback((8,), NamedSharding(auto, P(P.UNCONSTRAINED)), f)\n"
    )
    assert problems(on_auto) == []


def test_process_local_data_with_a_global_shape_is_a_device_put_of_that_shape() -> None:
    analysis = analyze(
        HEAD + "b = jax.make_array_from_process_local_data(sharding, np.zeros((5, 12), np.int32), (5, 12))\n"
    )
    site = site_named(analysis, "b")
    assert site.kind is SiteKind.DEVICE_PUT
    assert site.context is UsageContext.DEVICE_PUT
    assert site.shape == (5, 12)
    assert site.dtype is not None and site.dtype.name == "int32"
    assert problems(analysis) == [("SH001", Severity.ERROR)]


def test_process_local_data_without_a_global_shape_assumes_one_process() -> None:
    fits = analyze(HEAD + "b = jax.make_array_from_process_local_data(sharding, jnp.zeros((8, 12)))\n")
    site = site_named(fits, "b")
    assert site.shape == (8, 12)
    assert site.layout is not None and site.layout.shard_shape == (4, 3)
    assert any("if one process" in line for line in site.provenance)
    odd = analyze(HEAD + "b = jax.make_array_from_process_local_data(sharding, jnp.zeros((5, 12)))\n")
    assert problems(odd) == [("SH001", Severity.WARNING)]
    assert odd.diagnostics[0].assumptions == (ONE_PROCESS,)
    assert odd.diagnostics[0].message.endswith("pass `global_shape=` to state the whole array's shape)")


def test_process_local_data_names_the_site_after_the_local_data() -> None:
    analysis = analyze(
        HEAD
        + "def move(value):\n"
        + "    return jax.make_array_from_process_local_data(sharding, value)\n"
        + "move(jnp.zeros((8, 12)))\n"
    )
    assert site_named(analysis, "value").shape == (8, 12)


def test_a_callback_array_takes_the_dtype_its_callback_returns() -> None:
    analysis = analyze(
        HEAD
        + "def block(index):\n"
        + "    return jnp.ones((4, 3), jnp.bfloat16)\n"
        + "def host_block(index):\n"
        + "    return np.zeros((4, 3), np.int8)\n"
        + "w = jax.make_array_from_callback((8, 12), sharding, block)\n"
        + "v = jax.make_array_from_callback((8, 12), sharding, host_block)\n"
    )
    for name, dtype in (("w", "bfloat16"), ("v", "int8")):
        site = site_named(analysis, name)
        assert site.dtype is not None and site.dtype.name == dtype


def test_an_array_from_single_device_arrays_has_the_shape_and_sharding_it_is_given() -> None:
    """JAX-Toolbox's `make_array_from_single_device_arrays((n, k), sharding, blocks)`: the global
    shape is the first argument, the dtype that of the blocks (or `dtype=`), and the sharding is
    checked as `shard_shape` checks it (JAX compares each block with the shard shape)."""
    blocks = "block = jnp.zeros((4, 3), jnp.bfloat16)\nblocks = [block] * 8\n"
    analysis = analyze(
        HEAD
        + blocks
        + "w = jax.make_array_from_single_device_arrays((8, 12), sharding, blocks)\n"
        + "v = jax.make_array_from_single_device_arrays((8, 12), sharding, blocks, dtype=jnp.int8)\n"
        + "bad = jax.make_array_from_single_device_arrays((5, 12), sharding, blocks)\n"
    )
    site = site_named(analysis, "w")
    assert (site.kind, site.context, site.shape) == (SiteKind.CREATION, UsageContext.SHARD_SHAPE, (8, 12))
    assert site.layout is not None and site.layout.shard_shape == (4, 3)
    assert site.dtype is not None and site.dtype.name == "bfloat16"
    assert site_named(analysis, "v").dtype is not None and site_named(analysis, "v").dtype.name == "int8"
    assert problems(analysis) == [("SH001", Severity.ERROR)]
    assert analysis.diagnostics[0].span.line == HEAD.count("\n") + 4
