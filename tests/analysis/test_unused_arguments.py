"""Work the analysis skips because nothing can come of it (issue #14, the slowest files), and what
it must still find: the arguments of a library function shardls does not model are not evaluated
unless an array of known sharded type can come of them (`evaluation/unused.py`), and a function
that calls itself with nothing new is not entered again (`calls._recurs_on_nothing_new`)."""

from __future__ import annotations

import time

import pytest

from shardls.analysis.evaluation import calls
from shardls.analysis.facts import SiteKind
from shardls.core import Severity
from tests.analysis.analysis_helpers import analyze, line_of

HEADER = """\
import dataclasses
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
from tqdm import tqdm

mesh = jax.make_mesh((2, 4), ("data", "model"))
"""

GRID = (
    HEADER
    + """
def kernel(x, n, k):
    return jax.device_put(jnp.zeros((n, k)), NamedSharding(mesh, P("data", "model")))


def case(seed, n, k):
    x = jax.random.normal(jax.random.key(seed), (n, k))
    return kernel(x, n, k)


def test_grid():
    tests = [
        (seed, n, k)
        for seed in [0, 1, 2]
        for n in [128, 64, 32]
        for k in [128, 7168, 3]
        for a in [1, 2, 4, 8]
        for b in [1, 2, 4, 8]
        for c in [1, 2, 4, 8]
        for d in [1, 2, 4]
        if n // a >= 8 and b * c * d > 1
    ]
    for seed, n, k in tqdm(tests):
        case(seed, n, k)

odd = jax.device_put(jnp.zeros((7, 8)), NamedSharding(mesh, P("data")))
"""
)
"""jax-llm-examples' `decode_ragged_dot.py` test grid: a comprehension of thousands of items,
iterated through `tqdm`, which shardls does not model."""


def test_an_unmodelled_call_over_a_big_grid_costs_no_budget_and_drops_nothing() -> None:
    start = time.process_time()
    analysis = analyze(GRID)
    assert time.process_time() - start < 5  # it was a whole statement's budget per caller search
    assert not [d for d in analysis.diagnostics if d.code == "SH214"]
    placed = [s for s in analysis.sites if s.kind is SiteKind.DEVICE_PUT]
    assert [s.span.line for s in placed] == [line_of(GRID, "return jax.device_put"), line_of(GRID, "odd =")]
    errors = [d for d in analysis.diagnostics if d.severity is Severity.ERROR]
    assert [(d.code, d.span.line) for d in errors] == [("SH001", line_of(GRID, "odd ="))]


def test_a_site_inside_an_argument_of_an_unmodelled_call_is_still_found() -> None:
    source = HEADER + 'print(jax.device_put(jnp.zeros((7, 8)), NamedSharding(mesh, P("data"))))\n'
    analysis = analyze(source)
    (site,) = [s for s in analysis.sites if s.kind is SiteKind.DEVICE_PUT]
    assert site.shape == (7, 8)
    (error,) = [d for d in analysis.diagnostics if d.severity is Severity.ERROR]
    assert (error.code, error.span.line) == ("SH001", line_of(source, "print("))


def test_a_site_reached_through_an_argument_of_an_unmodelled_call_is_still_found() -> None:
    """A helper called inside the argument: the walker visits its call, and its body's sites
    in the context that call gives it."""
    source = (
        HEADER
        + """
def place(rows):
    return jax.device_put(jnp.zeros((rows, 8)), NamedSharding(mesh, P("data")))

print(place(7))
"""
    )
    analysis = analyze(source)
    (site,) = [s for s in analysis.sites if s.kind is SiteKind.DEVICE_PUT]
    assert site.shape == (7, 8)
    assert [d.code for d in analysis.diagnostics if d.severity is Severity.ERROR] == ["SH001"]


EXPLICIT = """\
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P
import logging

mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)
x = jax.device_put(jnp.ones((8, 16)), jax.P("X", "Y"))
w = jax.device_put(jnp.ones((16, 32)), jax.P("Y", None))
"""


def test_arrays_of_known_type_in_an_unmodelled_call_are_still_typed_and_judged() -> None:
    """`print(x @ w)`: the contraction JAX rejects is reported as in `y = x @ w`; typed locals of
    a comprehension in an argument are typed too."""
    source = EXPLICIT + "print(x @ w)\nlog = logging.info([a.T for a in (x, w)])\n"
    analysis = analyze(source)
    (error,) = analysis.diagnostics
    assert (error.code, error.severity) == ("SH301", Severity.ERROR)
    assert error.span.line == line_of(source, "print(x @ w)")
    line = line_of(source, "log =")
    transposed = [s for s in analysis.sites if s.kind is SiteKind.ARRAY_TYPE and s.span.line == line]
    assert {s.jax_type for s in transposed} == {"float32[16@Y,8@X]", "float32[32,16@Y]"}


def test_a_typed_array_read_through_a_binding_keeps_its_argument_evaluated() -> None:
    """The argument reads `pairs` (no call), whose binding reads `x` and `w` (placed by calls)."""
    source = EXPLICIT + "pairs = (x, w)\nlog = logging.info([p.T @ p for p in pairs])\n"
    analysis = analyze(source)
    line = line_of(source, "log =")
    assert [(d.code, d.span.line) for d in analysis.diagnostics] == [("SH301", line), ("SH301", line)]


RECURSIVE = (
    HEADER
    + """
is_type = lambda x, cls: type(x).__name__ == cls.__name__


@dataclasses.dataclass
class QuantArray:
    quant: jax.Array
    scale: jax.Array


def update_slice(x, y, pos, update_axis, quant_axis=-1):
    if is_type(x, QuantArray):
        quant_axis, update_axis = quant_axis % x.quant.ndim, update_axis % x.quant.ndim
        scale_axis = [ax for ax in range(x.quant.ndim) if ax != quant_axis][update_axis]
        new_quant = update_slice(x.quant, y.quant, pos, update_axis=update_axis)
        new_scale = update_slice(x.scale, y.scale, pos, update_axis=scale_axis)
        return dataclasses.replace(x, quant=new_quant, scale=new_scale)
    else:
        return jax.lax.dynamic_update_slice_in_dim(x, y, pos, axis=update_axis)


def step(cache, update, idx):
    k = update_slice(cache.k[idx], update, 0, update_axis=cache.time_axis)
    v = update_slice(cache.v[idx], update, jnp.maximum(cache.iters[idx], 0), update_axis=cache.time_axis)
    return k, v


def place(cache, update):
    k, v = step(cache, update, 0)
    return jax.device_put(k, NamedSharding(mesh, P("data"))), jax.device_put(v, NamedSharding(mesh, P("data")))

odd = jax.device_put(jnp.zeros((7, 8)), NamedSharding(mesh, P("data")))
"""
)
"""gemma4's `update_slice`: with `x` unknown, `is_type` is undecided and the helper recursed into
`x.quant` and `x.scale` down to the call-depth limit, no two levels' arguments equal."""


def entries_of(function: str, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The call depth of every evaluation of `function`'s body from now on."""
    entered: list[int] = []
    returned = calls._returned

    def counted(evaluator, info, returns, frame):  # type: ignore[no-untyped-def]
        if info.name == function:
            entered.append(frame.call_depth)
        return returned(evaluator, info, returns, frame)

    monkeypatch.setattr(calls, "_returned", counted)
    return entered


def test_a_helper_recursing_on_unknown_arguments_stops_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    entered = entries_of("update_slice", monkeypatch)
    analysis = analyze(RECURSIVE)
    assert len(entered) < 20  # each of the two calls recursed to the depth limit, hundreds of times
    assert not [d for d in analysis.diagnostics if d.code == "SH214"]
    assert [(d.code, d.span.line) for d in analysis.diagnostics if d.severity is Severity.ERROR] == [
        ("SH001", line_of(RECURSIVE, "odd ="))
    ]


def test_recursion_on_known_arguments_goes_on_as_before() -> None:
    """Each level passes something new (a smaller number): evaluated to the end."""
    source = (
        HEADER
        + """
def rows(n):
    return rows(n - 1) if n > 1 else 7

def leaves(tree):
    return sum(leaves(t) for t in tree) if isinstance(tree, tuple) else tree

x = jax.device_put(jnp.zeros((rows(6), leaves(((1, 2), (3, (4, 6)))))), NamedSharding(mesh, P("data")))
"""
    )
    analysis = analyze(source)
    (site,) = [s for s in analysis.sites if s.kind is SiteKind.DEVICE_PUT]
    assert site.shape == (7, 16)
    assert [d.code for d in analysis.diagnostics if d.severity is Severity.ERROR] == ["SH001"]


def test_a_helper_recursing_with_equal_arguments_stops_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """keras' `deserialize_keras_object`: each level rebuilds an argument equal to its own."""
    source = (
        HEADER
        + """
def deserialize(config, custom_objects=None):
    custom_objects = dict(custom_objects or {"scale": 2})
    if isinstance(config, (list, tuple)):
        return deserialize(config[0], custom_objects=custom_objects)
    return config

def load(config):
    return jax.device_put(deserialize(config), NamedSharding(mesh, P("data")))

odd = jax.device_put(jnp.zeros((7, 8)), NamedSharding(mesh, P("data")))
"""
    )
    entered = entries_of("deserialize", monkeypatch)
    analysis = analyze(source)
    assert 0 < len(entered) <= 4  # it went on to the call-depth limit, once per level
    assert [(d.code, d.span.line) for d in analysis.diagnostics if d.severity is Severity.ERROR] == [
        ("SH001", line_of(source, "odd ="))
    ]
