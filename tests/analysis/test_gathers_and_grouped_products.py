"""`jnp.take_along_axis` and `lax.ragged_dot` (the routers and experts of MoE layers: tunix's
samplers, jax-llm-examples' `_expert_fn`, maxtext's megablox fallback), as shardls gives them at a
`device_put`, against what JAX 0.10 gives for the same expression: the shape and dtype where JAX
runs it, no shape where JAX raises. Where an operand's shape is not known, what the operation
requires of it still fixes the result's rank."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from analysis_helpers import analyze, site_named

_ARRAYS = """
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

x = jnp.zeros((4, 5, 6))
wide = jnp.zeros((4, 1, 6))
idx = jnp.zeros((4, 2, 6), jnp.int32)
thin = jnp.zeros((1, 2, 6), jnp.int32)
flat = jnp.zeros((3,), jnp.int32)
lhs = jnp.zeros((16, 8), jnp.bfloat16)
rhs = jnp.zeros((4, 8, 32), jnp.bfloat16)
rhs32 = jnp.zeros((4, 8, 32), jnp.float32)
q8 = jnp.zeros((16, 8), jnp.int8)
groups = jnp.zeros((4,), jnp.int32)
"""
_PLACE = """
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("data", "model"))
r = jax.device_put({expression}, NamedSharding(mesh, P()))
"""

_EXPRESSIONS = (
    "jnp.take_along_axis(x, idx, 1)",
    "jnp.take_along_axis(x, thin, axis=1)",
    "jnp.take_along_axis(x, idx[..., :1], -2)",
    "jnp.take_along_axis(wide, idx, 0)",
    "jnp.take_along_axis(x, flat, None)",
    "np.take_along_axis(np.zeros((4, 5, 6), np.float32), np.zeros((4, 2, 6), np.int32), 1)",
    "jnp.take_along_axis(x.astype(jnp.bfloat16), idx, 2)",
    "jnp.take_along_axis(x, idx, 3)",  # an axis out of range
    "jnp.take_along_axis(x, idx[0], 1)",  # ranks that differ
    "jnp.take_along_axis(x, jnp.zeros((3, 2, 6), jnp.int32), 1)",  # sizes that do not broadcast
    "jnp.take_along_axis(x, idx, None)",  # axis=None needs 1-D indices
    "lax.ragged_dot(lhs, rhs, groups)",
    "lax.ragged_dot(lhs, rhs32, groups)",
    "lax.ragged_dot(q8, rhs, groups)",
    "lax.ragged_dot(lhs, rhs, groups, preferred_element_type=jnp.float32)",
    "jax.lax.ragged_dot(lhs=lhs, rhs=rhs, group_sizes=groups)",
    "lax.ragged_dot(lhs[None], rhs, groups)",  # lhs must be 2-D
    "lax.ragged_dot(lhs, rhs[0], groups)",  # rhs must be 3-D
)


def _jax_gives(expression: str) -> tuple[tuple[int, ...], str] | None:
    names: dict[str, object] = {}
    exec(_ARRAYS, names)
    try:
        result = eval(expression, names)
    except (TypeError, ValueError, IndexError, np.exceptions.AxisError):
        return None
    return tuple(result.shape), jax.device_put(result).dtype.name


def _shardls_gives(expression: str) -> tuple[tuple[int, ...], str | None] | None:
    site = site_named(analyze(_ARRAYS + _PLACE.format(expression=expression)), "r")
    if site.shape is None:
        return None
    return site.shape, site.dtype.name if site.dtype is not None else None


@pytest.mark.parametrize("expression", _EXPRESSIONS)
def test_shape_and_dtype_as_jax_gives_them(expression: str) -> None:
    assert _shardls_gives(expression) == _jax_gives(expression)


def test_the_operation_fixes_the_rank_of_unknown_operands() -> None:
    source = """
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))


def experts(tokens, weights, sizes, scores, order):
    out = jax.device_put(jax.lax.ragged_dot(tokens, weights, sizes), NamedSharding(mesh, P("data")))
    known_rhs = jax.device_put(jax.lax.ragged_dot(tokens, jnp.zeros((4, 8, 32)), sizes), NamedSharding(mesh, P()))
    picked = jax.device_put(jnp.take_along_axis(scores, order, axis=-1), NamedSharding(mesh, P()))
    known = jax.device_put(jnp.take_along_axis(jnp.zeros((4, 1, 6)), order, axis=1), NamedSharding(mesh, P()))
    flat = jax.device_put(jnp.take_along_axis(scores, order, axis=None), NamedSharding(mesh, P()))
    return out
"""
    analysis = analyze(source)
    ranks = {
        name: None if site.shape is None else [d if isinstance(d, int) else "?" for d in site.shape]
        for name in ("out", "known_rhs", "picked", "known", "flat")
        for site in [site_named(analysis, name)]
    }
    assert ranks == {
        "out": ["?", "?"],
        "known_rhs": ["?", 32],
        "picked": None,
        "known": [4, "?", 6],
        "flat": ["?"],
    }
