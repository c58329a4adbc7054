"""Arrays the library builds from data and operations (shardls/analysis/library/arrays.py): the
shapes and dtypes below are what JAX 0.10 gives on 8 CPU devices without x64."""

from __future__ import annotations

import time

import pytest
from analysis_helpers import analyze, codes, site_named

HEAD = """
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
"""


def placed(expression: str, spec: str = "P()", prelude: str = "") -> tuple[object, str]:
    """The shape and dtype shardls gives `expression` when it is put on the mesh."""
    site = site_named(
        analyze(HEAD + prelude + f"x = jax.device_put({expression}, NamedSharding(mesh, {spec}))"), "x"
    )
    return site.shape, site.dtype.name


@pytest.mark.parametrize(
    ("expression", "shape", "dtype"),
    [
        ("jnp.float32(1.0)", (), "float32"),
        ("jnp.bfloat16(1.0)", (), "bfloat16"),
        ("jnp.int32(3.7)", (), "int32"),
        ("jnp.bool_(1)", (), "bool"),
        ("jnp.float64(1.0)", (), "float32"),
        ("np.float32(1.0)", (), "float32"),
        ("jnp.float32([1, 2])", (2,), "float32"),
        ("jnp.float32(jnp.zeros((3, 4), jnp.int8))", (3, 4), "float32"),
        ("jnp.array(0.0)", (), "float32"),
        ("jnp.asarray(2)", (), "int32"),
        ("jnp.array(True)", (), "bool"),
        ("jnp.array(1 + 2j)", (), "complex64"),
        ("np.array(1.0)", (), "float32"),
        ("jnp.array([1, 2, 3])", (3,), "int32"),
        ("jnp.array((1, 2))", (2,), "int32"),
        ("jnp.array([[1.0, 2.0], [3.0, 4.0]])", (2, 2), "float32"),
        ("jnp.array([1, 2.0])", (2,), "float32"),
        ("jnp.array([True, 1])", (2,), "int32"),
        ("jnp.array([])", (0,), "float32"),
        ("jnp.array([[]])", (1, 0), "float32"),
        ("jnp.array(3, dtype=jnp.int8)", (), "int8"),
        ("jnp.asarray(2, jnp.float16)", (), "float16"),
        ("jnp.array(np.zeros((2, 3)))", (2, 3), "float32"),
        ("jnp.asarray([jnp.zeros(4, jnp.int8), jnp.ones(4, jnp.int8)])", (2, 4), "int8"),
        ("jnp.arange(8)", (8,), "int32"),
        ("jnp.arange(8.0)", (8,), "float32"),
        ("jnp.arange(1, 10, 3)", (3,), "int32"),
        ("jnp.arange(0.0, 1.0, 0.25)", (4,), "float32"),
        ("jnp.arange(2, dtype=jnp.float32)", (2,), "float32"),
    ],
)
def test_arrays_made_from_data(expression: str, shape: tuple[int, ...], dtype: str) -> None:
    assert placed(expression) == (shape, dtype)


def test_a_scalar_type_imported_by_name_converts_too() -> None:
    assert placed("bfloat16([1, 2])", prelude="from jax.numpy import bfloat16\n") == ((2,), "bfloat16")


def test_p_none_on_a_scalar_is_the_rank_error_jax_raises() -> None:
    for scalar in ("jnp.float32(1.0)", "jnp.array(0.0)", "jnp.asarray(2)"):
        source = HEAD + f"x = jax.device_put({scalar}, NamedSharding(mesh, P(None)))"
        assert codes(analyze(source)) == ["SH003"], scalar


def test_ragged_or_unknown_data_has_no_shape() -> None:
    assert placed("jnp.array([[1, 2], [3]])")[0] is None
    assert placed("jnp.array([n, 2])", prelude="from somewhere import n\n")[0] is None


def test_an_int_not_known_here_is_still_one_element() -> None:
    assert placed("jnp.array([n, 2])", prelude="import sys\nn = len(sys.argv)\n") == ((2,), "int32")


def test_a_repeated_row_is_read_once() -> None:
    start = time.perf_counter()
    assert placed("jnp.array([[0] * 5000] * 5000)", "P('data')") == ((5000, 5000), "int32")
    assert time.perf_counter() - start < 120  # a hang limit: CI is busy (read once: milliseconds)


def test_a_device_list_stays_a_device_list_for_the_mesh() -> None:
    source = """
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.asarray(jax.devices()).reshape(2, 4), ("data", "model"))
    x = jax.device_put(np.zeros((8, 8)), NamedSharding(mesh, P("data", "model")))
    """
    assert site_named(analyze(source), "x").shard_shape == (4, 2)


OPERATIONS = """
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=({types},) * 2)
with jax.set_mesh(mesh):
    key = jax.random.key(0)
    init = jax.nn.initializers.lecun_normal()
    a = jax.nn.initializers.he_normal()(key, (16, 32), jnp.bfloat16, P(None, "model"))
    b = init(key, (16, 32), out_sharding=P("data", "model"))
    c = jax.nn.initializers.zeros(key, (8,), jnp.float32, P("model"))
    x = jnp.zeros((8, 16), out_sharding=P("data"))
    w = jnp.zeros((16, 32), out_sharding=P(None, "model"))
    d = jnp.einsum("bd,df->bf", x, w, out_sharding=P("data", "model"))
    e = jnp.dot(x, w, out_sharding=P("data", None))
    f = jnp.matmul(x, w, out_sharding=P(None, "model"))
    g = x.at[0:4, ::2].get(out_sharding=P(None, "model"))
    h = jnp.einsum("...d,df", x, w, out_sharding=P("model"))
"""


@pytest.mark.parametrize(
    ("name", "shape", "dtype", "shard"),
    [
        ("a", (16, 32), "bfloat16", (16, 8)),
        ("b", (16, 32), "float32", (8, 8)),
        ("c", (8,), "float32", (2,)),
        ("d", (8, 32), "float32", (4, 8)),
        ("e", (8, 32), "float32", (4, 32)),
        ("f", (8, 32), "float32", (8, 8)),
        ("g", (4, 8), "float32", (4, 2)),
        ("h", (8, 32), "float32", (2, 32)),
    ],
)
def test_out_sharding_of_initializers_and_operations(
    name: str, shape: tuple[int, ...], dtype: str, shard: tuple[int, ...]
) -> None:
    analysis = analyze(OPERATIONS.format(types="AxisType.Explicit"))
    site = site_named(analysis, name)
    assert (site.shape, site.dtype.name, site.shard_shape) == (shape, dtype, shard)
    assert not analysis.diagnostics


def test_out_sharding_on_auto_axes_is_rejected_as_jax_does() -> None:
    analysis = analyze(OPERATIONS.format(types="AxisType.Auto"))
    rejected = {d.span.line for d in analysis.diagnostics if d.code == "SH011"}
    with_specs = {i for i, text in enumerate(OPERATIONS.split("\n")) if "P(" in text}
    assert rejected == with_specs and len(rejected) == 10


def test_indexed_get_that_does_not_divide_is_an_error() -> None:
    source = (
        OPERATIONS.format(types="AxisType.Explicit") + '    bad = x.at[0:3].get(out_sharding=P("data"))\n'
    )
    assert codes(analyze(source)) == ["SH001"]
