"""Operations that move, slice, pad or loop over arrays, on Auto meshes (no sharding in types):
library/array_moves.py and array_slicing.py. The known shapes below are what JAX 0.10 gives
(checked by running each expression); where the operand's rank is not known, the operation's
own arguments fix it or nothing does."""

from __future__ import annotations

import pytest
from analysis_helpers import analyze, site_named

HEAD = """
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jnp.zeros((2, 3, 4))
y = jnp.zeros((1, 3, 1))
"""


def placed(expression: str) -> tuple[object, str | None]:
    site = site_named(analyze(HEAD + f"r = jax.device_put({expression}, NamedSharding(mesh, P()))"), "r")
    return site.shape, site.dtype.name if site.dtype is not None else None


@pytest.mark.parametrize(
    ("expression", "shape", "dtype"),
    [
        ("x.transpose()", (4, 3, 2), "float32"),
        ("x.transpose(1, 0, 2)", (3, 2, 4), "float32"),
        ("x.transpose((1, 0, -1))", (3, 2, 4), "float32"),
        ("x.swapaxes(0, -1)", (4, 3, 2), "float32"),
        ("jnp.swapaxes(x, 1, 2)", (2, 4, 3), "float32"),
        ("x.ravel()", (24,), "float32"),
        ("x.flatten()", (24,), "float32"),
        ("jnp.ravel(x)", (24,), "float32"),
        ("jnp.squeeze(y)", (3,), "float32"),
        ("y.squeeze(0)", (3, 1), "float32"),
        ("jnp.squeeze(y, axis=(0, -1))", (3,), "float32"),
        ("jnp.moveaxis(x, 0, -1)", (3, 4, 2), "float32"),
        ("jnp.moveaxis(x, (0, 1), (-1, -2))", (4, 3, 2), "float32"),
        ("jnp.reshape(x, (6, -1))", (6, 4), "float32"),
        ("jnp.reshape(x, -1)", (24,), "float32"),
        ("jnp.flip(x)", (2, 3, 4), "float32"),
        ("jnp.roll(x, 1)", (2, 3, 4), "float32"),
        ("jnp.sort(x, axis=None)", (24,), "float32"),
        ("jnp.argsort(x)", (2, 3, 4), "int32"),
        ("jnp.logical_not(x)", (2, 3, 4), "bool"),
        ("jnp.isnan(x)", (2, 3, 4), "bool"),
        ("lax.top_k(x, 2)[0]", (2, 3, 2), "float32"),
        ("lax.top_k(x, k=2)[1]", (2, 3, 2), "int32"),
        ("lax.top_k(x.astype(jnp.bfloat16), 2, axis=0)[0]", (2, 3, 4), "bfloat16"),
        ("lax.top_k(x, 2, axis=-2)[1]", (2, 2, 4), "int32"),
        ("lax.top_k(x, 0)[0]", (2, 3, 0), "float32"),
        ("jax.nn.one_hot(jnp.zeros((2, 3), jnp.int32), 5)", (2, 3, 5), "float32"),
        ("jax.nn.one_hot(jnp.zeros((2, 3), jnp.int32), 5, axis=0)", (5, 2, 3), "float32"),
        ("lax.slice(x, (0, 1, 0), (2, 3, 4), (1, 2, 3))", (2, 1, 2), "float32"),
        ("lax.slice_in_dim(x, 1, 3, axis=2)", (2, 3, 2), "float32"),
        ("lax.slice_in_dim(x, 1, None, axis=2)", (2, 3, 3), "float32"),
        ("lax.slice_in_dim(x, -3, -1, axis=2)", (2, 3, 2), "float32"),
        ("lax.dynamic_slice_in_dim(x, 1, 2, axis=2)", (2, 3, 2), "float32"),
        ("lax.dynamic_slice(x, (0, 0, 0), (1, 2, 3))", (1, 2, 3), "float32"),
        ("lax.dynamic_index_in_dim(x, 1, axis=1)", (2, 1, 4), "float32"),
        ("lax.dynamic_index_in_dim(x, 1, axis=1, keepdims=False)", (2, 4), "float32"),
        ("lax.dynamic_update_slice_in_dim(x, jnp.zeros((2, 3, 1)), 1, axis=2)", (2, 3, 4), "float32"),
        ("lax.dynamic_update_index_in_dim(x, jnp.zeros((2, 3)), 1, axis=2)", (2, 3, 4), "float32"),
        ("lax.dynamic_update_slice(x, jnp.zeros((2, 3, 1)), (0, 0, 1))", (2, 3, 4), "float32"),
        ("lax.fori_loop(0, 3, lambda i, c: c + 1, 0)", (), "int32"),
        ("lax.fori_loop(0, 3, lambda i, c: (c[0] + 1, c[1]), (0, x))[1]", (2, 3, 4), "float32"),
        ("lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1]), (0, x))[1]", (2, 3, 4), "float32"),
        ("jnp.pad(jnp.zeros((3, 4)), [(0, 1)])", (4, 5), "float32"),
        ("jnp.pad(jnp.zeros((3, 4)), (1, 2))", (6, 7), "float32"),
        ("jnp.pad(jnp.zeros((3, 4)), 1)", (5, 6), "float32"),
        ("jnp.pad(jnp.zeros((3, 4)), ((1, 2),))", (6, 7), "float32"),
        ("jnp.pad(jnp.zeros((3, 4)), [[0, 0], [0, 1]])", (3, 5), "float32"),
        ("lax.broadcasted_iota(jnp.int32, (2, 3), 1)", (2, 3), "int32"),
        ("lax.iota(jnp.int32, 5)", (5,), "int32"),
        ("jnp.bincount(jnp.zeros(4, jnp.int32), length=9)", (9,), "int32"),
        ("jnp.eye(3)", (3, 3), "float32"),
        ("jnp.eye(3, 4)", (3, 4), "float32"),
        ("jnp.full_like(x, 2)", (2, 3, 4), "float32"),
    ],
)
def test_shapes_as_jax_gives_them(expression: str, shape: tuple[int, ...], dtype: str) -> None:
    assert placed(expression) == (shape, dtype)


@pytest.mark.parametrize(
    "expression",
    [
        "jnp.pad(jnp.zeros((3,)), [(0, 0), (0, 1)])",  # JAX: pad_width of shape (2, 2) for rank 1
        "jnp.squeeze(y, axis=1)",  # a size 3 cannot be squeezed
        "x.transpose(0, 1)",  # a permutation of another rank
        "lax.dynamic_slice(x, (0, 0), (1, 2))",
        "lax.slice(x, (0, 2, 0), (2, 1, 4))",  # a limit below its start
        "lax.top_k(x, 3, axis=0)[0]",  # k above the size along the axis
        "lax.top_k(x, -1)[1]",
        "lax.top_k(x, 2, axis=3)[0]",
    ],
)
def test_what_jax_rejects_has_no_shape(expression: str) -> None:
    assert placed(expression)[0] is None


def _ranks(body: str) -> dict[str, list[str] | None]:
    analysis = analyze(HEAD + body)
    return {
        s.name: None if s.shape is None else [str(getattr(d, "name", d)) for d in s.shape]
        for s in analysis.sites
        if s.name is not None
    }


def test_the_operation_fixes_the_rank_of_an_unknown_operand() -> None:
    """tunix: `qkv.transpose(0, 2, 1, 3)` (of an array: `a` itself may be any object), `lax.dynamic_update_slice(cache['v'], v, (0, end, 0, 0))`;
    flax: `jnp.argmax(y_pred, axis=-1).ravel()`; jax-llm-examples: `jnp.pad(chunk, [(0, 0), (0, n)])`."""
    ranks = _ranks(
        """
def f(a, cache, n):
    t = jax.device_put(jnp.tanh(a).transpose(0, 2, 1, 3), NamedSharding(mesh, P()))
    u = jax.device_put(lax.dynamic_update_slice(cache["v"], a, (0, n, 0, 0)), NamedSharding(mesh, P()))
    r = jax.device_put(jnp.argmax(a, axis=-1).ravel(), NamedSharding(mesh, P()))
    p = jax.device_put(jnp.pad(a, [(0, 0), (0, n)]), NamedSharding(mesh, P()))
    s = jax.device_put(lax.dynamic_slice(a, (0, 0), (4, n)), NamedSharding(mesh, P()))
    c = jax.device_put(lax.fori_loop(0, n, lambda i, z: z, jnp.zeros((n, 8))), NamedSharding(mesh, P()))
    return t
"""
    )
    assert {name: len(dims) if dims is not None else None for name, dims in ranks.items()} == {
        "t": 4,
        "u": 4,
        "r": 1,
        "p": 2,
        "s": 2,
        "c": 2,
    }
    assert ranks["s"] == ["4", "n"] and ranks["c"] == ["n", "8"]


def test_an_unknown_operand_keeps_an_unknown_rank_where_nothing_fixes_it() -> None:
    ranks = _ranks(
        """
def f(a, n):
    t = jax.device_put(jnp.tanh(a).transpose(), NamedSharding(mesh, P()))
    o = jax.device_put(a.transpose(0, 1), NamedSharding(mesh, P()))
    p = jax.device_put(jnp.pad(a, [(0, n)]), NamedSharding(mesh, P()))
    q = jax.device_put(jnp.squeeze(a), NamedSharding(mesh, P()))
    m = jax.device_put(jnp.argmax(a, axis=-1), NamedSharding(mesh, P()))
    g = jax.device_put(jax.lax.stop_gradient(a), NamedSharding(mesh, P()))
    return t
"""
    )
    assert ranks == {"t": None, "o": None, "p": None, "q": None, "m": None, "g": None}


def test_a_bare_squeeze_needs_every_size() -> None:
    """An unknown size may be 1: `jnp.squeeze` without an axis may drop it or not."""
    ranks = _ranks(
        """
def f(n):
    a = jnp.zeros((1, n, 4))
    q = jax.device_put(jnp.squeeze(a), NamedSharding(mesh, P()))
    k = jax.device_put(jnp.squeeze(a, 0), NamedSharding(mesh, P()))
    return q
"""
    )
    assert ranks == {"q": None, "k": ["n", "4"]}
