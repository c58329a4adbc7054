"""`functools.partial` of a workspace function is called like the function with the partial's
arguments first (`values.PartialV`): jax-llm-examples' deepseek_r1 and kimi_k2 bind their
constraint helper's mesh and rules once (`lsc = partial(logical_sharding_constraint,
mesh=cfg.mesh, rules=cfg.rules)`) and place the router's outputs through it."""

from __future__ import annotations

from analysis_helpers import analyze

HEAD = """
import functools
from functools import partial
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


def constrain(x, axes, mesh, rows=1):
    return jax.lax.with_sharding_constraint(jnp.repeat(x, rows, axis=0), NamedSharding(mesh, P(*axes)))


def place(x, spec):
    return jax.device_put(x, NamedSharding(mesh, spec))
"""


def _shapes(body: str) -> dict[str, object]:
    return {site.name: site.shape for site in analyze(HEAD + body).sites if site.name in ("a", "b", "c", "d")}


def test_a_partial_is_called_with_its_arguments_first() -> None:
    shapes = _shapes(
        """
@jax.jit
def f(x):
    lsc = partial(constrain, mesh=mesh, rows=2)
    a = jax.lax.with_sharding_constraint(lsc(x, ("x", None)).reshape((4, 2, 8)), P("x", None, None))
    c = jax.lax.with_sharding_constraint(lsc(x, (None, "y"), rows=1), P(None, "y"))
    put = functools.partial(place, spec=P("x"))
    b = jax.device_put(put(jnp.zeros((8, 4))), NamedSharding(mesh, P("x")))
    return a


f(jnp.zeros((4, 8)))
"""
    )
    assert shapes == {"a": (4, 2, 8), "c": (4, 8), "b": (8, 4)}


def test_a_partial_of_a_value_not_known_stays_unknown() -> None:
    shapes = _shapes(
        """
def f(x, helper):
    d = jax.device_put(partial(helper, rows=2)(x), NamedSharding(mesh, P()))
    return d


f(jnp.zeros((4, 8)), object())
"""
    )
    assert shapes == {"d": None}
