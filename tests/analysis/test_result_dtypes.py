"""The dtype of a reduction, a cumulative sum or an elementwise function of a bool or integer
array, as shardls gives it at a `device_put`, against what JAX 0.10 and numpy give (with and
without x64): a count of `True`s is an integer, the mean of integers a float; where the rules are
not known (numpy's bools, a `jax.nn` activation of an integer), the dtype is left unknown rather
than the operand's."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from analysis_helpers import analyze, site_named

from shardls.analysis.settings import Settings

HEAD = """
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
"""

_DTYPES = ("bool", "int8", "uint8", "int16", "int32", "bfloat16", "float32")
_FUNCTIONS = (
    "sum",
    "prod",
    "nansum",
    "mean",
    "std",
    "var",
    "median",
    "max",
    "argmax",
    "any",
    "cumsum",
    "cumprod",
    "exp",
    "sqrt",
    "tanh",
    "reciprocal",
    "abs",
    "square",
    "negative",
)


def _shardls_dtype(expression: str, x64: bool) -> str | None:
    source = HEAD + f"x = jax.device_put({expression}, NamedSharding(mesh, P()))"
    site = site_named(analyze(source, Settings(x64=x64)), "x")
    unknown = any(note.startswith("dtype not known here") for note in site.assumptions)
    return None if unknown or site.dtype is None else site.dtype.name


def _device_dtype(module: str, function: str, dtype: str) -> str | None:
    """What the array is on the device: numpy's result narrowed as `device_put` narrows it."""
    library = np if module == "np" else jnp
    operand = (np if module == "np" else jnp).ones((4, 4), dtype if dtype != "bfloat16" else jnp.bfloat16)
    try:
        return str(jax.device_put(getattr(library, function)(operand)).dtype)
    except (TypeError, ValueError):
        return None


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("module", ["jnp", "np"])
@pytest.mark.parametrize("function", _FUNCTIONS)
def test_the_dtype_is_the_one_jax_and_numpy_give_or_unknown(module: str, function: str, x64: bool) -> None:
    for dtype in _DTYPES:
        if module == "np" and dtype == "bfloat16":
            continue
        with jax.enable_x64(x64):
            expected = _device_dtype(module, function, dtype)
        found = _shardls_dtype(f"{module}.{function}({module}.ones((4, 4), {module}.{dtype}))", x64)
        assert found in (expected, None), (module, function, dtype, found, expected)
        if dtype != "bool" or function in ("sum", "mean", "cumsum", "argmax", "any", "abs"):
            assert found == expected, (module, function, dtype, found, expected)


@pytest.mark.parametrize("x64", [False, True])
def test_array_methods_follow_jax_where_numpy_agrees(x64: bool) -> None:
    with jax.enable_x64(x64):
        counted = str(jnp.ones(4, bool).sum().dtype)
        averaged = str(jnp.ones(4, jnp.int32).mean().dtype)
    assert _shardls_dtype("(jnp.ones((4, 4)) > 0).sum(axis=0)", x64) == counted
    # numpy's mean of integers is float64, JAX's float32, even with x64: a method's array may be
    # either, so only without x64 (where both are float32 on the device) is it known.
    assert _shardls_dtype("jnp.ones((4, 4), jnp.int32).mean()", x64) == (None if x64 else averaged)


def test_a_stated_dtype_wins() -> None:
    assert _shardls_dtype("jnp.sum(jnp.ones((4, 4), bool), axis=0, dtype=jnp.float16)", False) == "float16"
    assert _shardls_dtype("jnp.cumsum(jnp.ones((4, 4), bool), axis=1, dtype=jnp.int8)", False) == "int8"


def test_an_activation_of_integers_has_no_dtype_known_here() -> None:
    assert _shardls_dtype("jax.nn.relu(jnp.ones((4, 4), jnp.bfloat16))", False) == "bfloat16"
    assert _shardls_dtype("jax.nn.gelu(jnp.ones((4, 4), jnp.int32))", False) is None


@pytest.mark.parametrize(
    "cases",
    [
        "1, 0",
        "1.0, 0",
        "True, False",
        "jnp.ones((4, 4), jnp.bfloat16), 0",
        "jnp.ones((4, 4), jnp.int8), 1.5",
        "jnp.ones((4, 4), jnp.int32), jnp.ones((4, 4), jnp.float32)",
        "jnp.ones((4, 4), jnp.uint8), jnp.ones((4, 4), jnp.int8)",
        "jnp.asarray(0), jnp.ones((4, 4), jnp.bfloat16)",
    ],
)
@pytest.mark.parametrize("x64", [False, True])
def test_where_promotes_its_cases_as_jax_does(cases: str, x64: bool) -> None:
    condition = "jnp.ones((4, 4)) > 0"
    with jax.enable_x64(x64):
        expected = str(eval(f"jnp.where({condition}, {cases})", {"jnp": jnp}).dtype)
    found = _shardls_dtype(f"jnp.where({condition}, {cases})", x64)
    assert found in (expected, None), (cases, found, expected)
    if not x64 and "asarray" not in cases:
        assert found == expected, (cases, found, expected)
