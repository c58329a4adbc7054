"""`type(x)` of an array and a workspace class's `__module__` (library/type_names.py,
evaluation/class_modules.py), and `and` with a false operand after an unknown comparison
(operators._eval_BoolOp): jax-llm-examples' `is_type(x, QuantArray)` is false for an array, so
its placement helpers (`psc`, `lsc`) keep the array's shape; for anything not known to be an
array the test stays unknown and both branches are taken."""

from __future__ import annotations

from analysis_helpers import analyze

HEAD = """
import dataclasses
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
is_type = lambda x, cls: (type(x).__name__ == cls.__name__) and (type(x).__module__ == cls.__module__)


@dataclasses.dataclass
class QuantArray:
    quant: jax.Array
    scale: jax.Array


def lsc(x, spec):
    if is_type(x, QuantArray):
        return dataclasses.replace(x, quant=jax.device_put(x.quant, NamedSharding(mesh, spec)))  # quant
    return jax.device_put(x, NamedSharding(mesh, spec))  # plain
"""


def _shapes(body: str, head: str = HEAD, path: str = "/virtual/model.py") -> dict[str, list[object | None]]:
    """Each named site's shapes (one per visit); those of the quantized branch's placement under
    the key "quant"."""
    source = head + body
    analysis = analyze(source, path=path)
    quant_line = next(n for n, line in enumerate(source.splitlines()) if line.endswith("# quant"))
    shapes: dict[str, list[object | None]] = {}
    for site in analysis.sites:
        key = "quant" if site.span.line == quant_line else site.name or ""
        shapes.setdefault(key, []).append(site.shape)
    return shapes


def test_an_array_is_no_instance_of_a_workspace_class() -> None:
    shapes = _shapes(
        """
def f(a: jax.Array):
    y = lsc(jnp.zeros((8, 4)), P("x", None)).reshape((2, 4, 4))
    z = jax.device_put(y, NamedSharding(mesh, P("x", None, None)))
    return z
"""
    )
    assert "quant" not in shapes
    assert shapes["z"] == [(2, 4, 4)]


def test_a_value_not_known_to_be_an_array_takes_both_branches() -> None:
    shapes = _shapes(
        """
def f(w):
    return lsc(w, P("x", None))


f(object())
"""
    )
    assert "quant" in shapes


def test_a_class_that_names_its_module_is_not_decided() -> None:
    """`__module__` assigned in the body may be any text, JAX's modules too."""
    head = HEAD.replace("    scale: jax.Array\n", '    scale: jax.Array\n    __module__ = "jax.numpy"\n')
    shapes = _shapes("\nlsc(jnp.zeros((8, 4)), P('x', None))\n", head)
    assert "quant" in shapes


def test_a_class_in_a_jax_package_is_not_decided() -> None:
    shapes = _shapes("\nlsc(jnp.zeros((8, 4)), P('x', None))\n", path="/virtual/jax/_src/quant.py")
    assert "quant" in shapes


def test_and_is_false_after_an_unknown_comparison_only() -> None:
    """`a == b and False` is falsy whatever `a == b` is; `f(a) and False` too, but its value may
    be any falsy object; `or` is not decided by a later operand."""
    analysis = analyze(
        """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((2, 4), ("x", "y"))


def f(a, b):
    c = jax.device_put(jnp.zeros(4) if (a == b and 1 == 2) else jnp.zeros((4, 2)), NamedSharding(mesh, P()))
    d = jax.device_put(jnp.zeros(4) if (a.y and 1 == 2) else jnp.zeros((4, 2)), NamedSharding(mesh, P()))
    e = jax.device_put(jnp.zeros(4) if (a == b or 1 == 2) else jnp.zeros((4, 2)), NamedSharding(mesh, P()))
    return c
"""
    )
    shapes: dict[str, set[object]] = {}
    for site in analysis.sites:
        shapes.setdefault(site.name or "", set()).add(site.shape)
    assert shapes == {"c": {(4, 2)}, "d": {(4,), (4, 2)}, "e": {(4,), (4, 2)}}


def test_top_k_of_an_operand_of_unknown_rank_has_no_rank() -> None:
    analysis = analyze(
        HEAD
        + """
def route(scores, k):
    values, indices = jax.lax.top_k(scores, k)
    v = jax.device_put(values, NamedSharding(mesh, P()))
    i = jax.device_put(indices, NamedSharding(mesh, P()))
    s = jax.device_put(jax.lax.top_k(jnp.zeros((8, 16)), k)[1], NamedSharding(mesh, P()))
    return v
"""
    )
    sites = {site.name: site for site in analysis.sites}
    assert sites["v"].shape is None and sites["i"].shape is None
    shape = sites["s"].shape
    assert shape is not None and shape[0] == 8 and str(getattr(shape[1], "name", shape[1])) == "k"
    assert sites["s"].dtype is not None and sites["s"].dtype.name == "int32"
