"""`jnp.split`, `jnp.array_split`, `jnp.hsplit`, `jnp.vsplit`, `jnp.dsplit` (`shardls/analysis/library/
array_shaping.py`): a list of parts with the shapes JAX 0.10 gives; an unknown size gives parts of
unknown size, an unknown number of parts or a cut JAX rejects an unknown list, never a guess."""

from __future__ import annotations

import pytest
from analysis_helpers import analyze, site_named

from shardls.analysis.facts import SymbolicDim

HEAD = """
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jnp.zeros((8, 12))
"""


def placed_shape(part: str, prelude: str = "") -> object:
    analysis = analyze(HEAD + prelude + f"y = jax.device_put({part}, NamedSharding(mesh, P()))\n")
    return site_named(analysis, "y").shape


@pytest.mark.parametrize(
    ("part", "shape"),
    [
        ("jnp.split(x, 2)[0]", (4, 12)),
        ("jnp.split(x, 3, axis=1)[2]", (8, 4)),
        ("jnp.split(x, 4, axis=-1)[3]", (8, 3)),
        ("jnp.split(x, [3, 5])[0]", (3, 12)),
        ("jnp.split(x, [3, 5])[1]", (2, 12)),
        ("jnp.split(x, [3, 5])[2]", (3, 12)),
        ("jnp.split(x, (2,), axis=1)[1]", (8, 10)),
        ("jnp.array_split(x, 3)[0]", (3, 12)),
        ("jnp.array_split(x, 3)[2]", (2, 12)),
        ("jnp.array_split(x, 10)[9]", (0, 12)),
        ("jnp.hsplit(x, 3)[1]", (8, 4)),
        ("jnp.hsplit(jnp.zeros(6), 3)[1]", (2,)),
        ("jnp.vsplit(x, [1])[1]", (7, 12)),
        ("np.split(np.zeros((4, 2)), 2)[1]", (2, 2)),
        ("jnp.dsplit(jnp.zeros((2, 3, 8)), 4)[3]", (2, 3, 2)),
        ("jnp.dsplit(jnp.zeros((2, 3, 8)), [1])[1]", (2, 3, 7)),
    ],
)
def test_a_part_has_the_shape_jax_gives(part: str, shape: tuple[int, ...]) -> None:
    assert placed_shape(part, "import numpy as np\n") == shape


def test_the_parts_unpack_into_names() -> None:
    assert placed_shape("v", "q, k, v = jnp.split(x, [1, 2])\n") == (6, 12)


@pytest.mark.parametrize(
    "part",
    ["jnp.split(x, 5)[0]", "jnp.split(x, [5, 3])[0]", "jnp.split(x, [3, 20])[0]", "jnp.dsplit(x, 2)[0]"],
)
def test_a_cut_jax_rejects_gives_no_shape(part: str) -> None:
    assert placed_shape(part) is None


def test_an_unknown_number_of_parts_leaves_the_list_unknown() -> None:
    analysis = analyze(
        HEAD + "def f(n):\n    y = jax.device_put(jnp.split(x, n)[0], NamedSharding(mesh, P('data')))\n"
    )
    assert site_named(analysis, "y").shape is None


def test_an_unknown_size_gives_parts_of_unknown_size() -> None:
    analysis = analyze(
        HEAD
        + "def f(a):\n"
        + "    y = jax.device_put(jnp.split(jnp.zeros((a, 12)), 2)[0], NamedSharding(mesh, P('data')))\n"
        + "    z = jax.device_put(jnp.split(jnp.zeros((a, 12)), [2, 4])[1], NamedSharding(mesh, P('data')))\n"
    )
    first, rest = site_named(analysis, "y").shape or ()
    assert isinstance(first, SymbolicDim) and rest == 12
    assert site_named(analysis, "z").shape == (2, 12)
    assert analysis.diagnostics == ()
