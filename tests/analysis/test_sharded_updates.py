"""Indexed updates, `take`/`take_along_axis`, sorts and boolean masks in the analyzer: which
source forms get a type, where the errors go, and where eager and traced readings differ. The
types themselves are JAX's to say (tests/core/test_types_scatter.py and the differential tests).
"""

from __future__ import annotations

from shardls.analysis.facts import FileAnalysis, SiteKind
from shardls.core import Severity
from tests.analysis.analysis_helpers import analyze, line_of

SOURCE = """
import jax
import jax.numpy as jnp
from jax.sharding import AxisType, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)
x = jax.device_put(jnp.zeros((8, 16)), P("X", "Y"))
b = jax.device_put(jnp.zeros((8, 16)), P(None, "Y"))
rows = jax.device_put(jnp.zeros((8, 16)), P("X", None))
ids = jnp.array([3, 1, 4, 1])
whole_rows = b.at[0].set(1.0)
row_of_x = x.at[0].set(1.0)
laid_out = x.at[0].set(1.0, out_sharding=P("X", None))
added = b.at[ids].add(b[0])
taken = jnp.take(b, ids, axis=0)
taken_by_method = b.take(ids, axis=0)
one_hot = jnp.take_along_axis(rows, jnp.zeros((8, 3), jnp.int32), axis=1, mode="one_hot")
across = jnp.take(b, ids, axis=1)
along = jnp.take_along_axis(rows, jnp.zeros((8, 3), jnp.int32), axis=1)
sorted_rows = jnp.sort(b, axis=0)
order = b.argsort(axis=1)
best = jax.lax.top_k(rows, 4)[1]
masked = b[b > 0]
cleared = b.at[jnp.arange(8) > 3].set(0.0)

@jax.jit
def clear_negatives(v):
    return v.at[v < 0].set(0.0)

y = clear_negatives(x)
"""


def _type(analysis: FileAnalysis, name: str) -> str | None:
    line = line_of(SOURCE, f"{name} = ")
    found = [
        s
        for s in analysis.names
        if s.kind is SiteKind.ARRAY_NAME and s.span.line == line and s.name == name and s.span.column == 0
    ]
    return found[0].jax_type if found else None


def _errors(analysis: FileAnalysis) -> dict[int, str]:
    return {d.span.line: d.code for d in analysis.diagnostics if d.severity is Severity.ERROR}


def test_updates_takes_and_sorts_are_typed_as_jax_types_them() -> None:
    analysis = analyze(SOURCE)
    assert _type(analysis, "whole_rows") == "float32[8,16@Y]"
    assert _type(analysis, "laid_out") == "float32[8@X,16]"
    assert _type(analysis, "added") == "float32[8,16@Y]"
    assert _type(analysis, "taken") == "float32[4,16@Y]"
    assert _type(analysis, "taken_by_method") == "float32[4,16@Y]"
    assert _type(analysis, "one_hot") is None  # an einsum, not a gather: not modelled, not guessed
    assert _type(analysis, "along") == "float32[8@X,3]"
    assert _type(analysis, "sorted_rows") == "float32[8,16@Y]"
    assert _type(analysis, "best") == "int32[8@X,4]"
    # An eager masked update of a scalar where the masked dimension is unsharded: JAX's answer
    # does not depend on how many entries are set.
    assert _type(analysis, "cleared") == "float32[8,16@Y]"


def test_each_rejection_is_reported_where_jax_raises_it() -> None:
    analysis = analyze(SOURCE)
    errors = _errors(analysis)
    assert errors.pop(line_of(SOURCE, "row_of_x = ")) == "SH313"
    assert errors.pop(line_of(SOURCE, "across = ")) == "SH308"
    assert errors.pop(line_of(SOURCE, "order = ")) == "SH314"
    assert errors.pop(line_of(SOURCE, "return v.at[v < 0]")) == "SH315"
    assert errors == {}
    for rejected in ("row_of_x", "across", "order"):
        assert _type(analysis, rejected) is None  # nothing downstream is typed from a rejection


def test_an_eager_boolean_mask_gives_no_type_and_no_error() -> None:
    analysis = analyze(SOURCE)
    assert _type(analysis, "masked") is None  # its shape is the mask's count: only data say it
    assert line_of(SOURCE, "masked = ") not in _errors(analysis)


def test_a_mask_where_eager_and_traced_readings_differ_is_left_untyped() -> None:
    source = SOURCE.replace("@jax.jit\n", "@unknown_decorator\n")
    analysis = analyze(source)
    body = line_of(source, "return v.at[v < 0]")
    read = [s.jax_type for s in analysis.names if s.span.line == body]
    assert "float32[8@X,16@Y]" in read  # the body is analysed with `v` typed...
    assert body not in _errors(analysis)  # ...but SH315 traced, a data-dependent shape eagerly


def test_a_placement_keeps_the_weak_type() -> None:
    # Found by the source-level test: `reshard`/`device_put` of a weak array stay weak in JAX.
    source = (
        SOURCE + "weak = jnp.maximum(jax.nn.relu6(ids), 2)\nplaced = jax.sharding.reshard(weak, P('X'))\n"
    )
    analysis = analyze(source)
    line = line_of(source, "placed = ")
    assert [s.jax_type for s in analysis.names if s.span.line == line and s.name == "placed"] == [
        "~float32[4@X]"
    ]
