"""When a step budget ends, shardls says where (SH214, an info), instead of dropping layouts and
problems silently; it changes no other diagnostic and never fails a check."""

from __future__ import annotations

import functools
import textwrap

from analysis_helpers import analyze, line_of

from shardls.analysis.facts import FileAnalysis
from shardls.core import Severity

HEADER = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'))
"""

EXPENSIVE = HEADER + textwrap.dedent(
    """
    def build():
        a = jax.device_put(jnp.zeros((sum(i * j for i in range(99) for j in range(99)), 8)), NamedSharding(mesh, P('data')))
        b = jax.device_put(jnp.zeros((sum(i + j for i in range(99) for j in range(99)), 8)), NamedSharding(mesh, P('data')))
        c = jax.device_put(jnp.zeros((sum(i - j for i in range(99) for j in range(99)), 8)), NamedSharding(mesh, P('data')))
        e = jax.device_put(jnp.zeros((7, 8)), NamedSharding(mesh, P('data')))
        return a, b, c, e

    later = jax.device_put(jnp.zeros((9, 8)), NamedSharding(mesh, P('data')))
    """
)
"""Three sums computed term by term use up `build`'s budget before the indivisible placement."""


@functools.cache
def expensive() -> FileAnalysis:
    return analyze(EXPENSIVE)


def test_a_statement_whose_budget_ended_says_where() -> None:
    analysis = expensive()
    notes = [d for d in analysis.diagnostics if d.code == "SH214"]
    assert len(notes) == 1
    assert notes[0].severity is Severity.INFO
    assert notes[0].span.line == line_of(EXPENSIVE, "a = jax.device_put")
    assert "this statement" in notes[0].message


def test_the_next_statement_has_its_own_budget_and_its_problems() -> None:
    analysis = expensive()
    errors = [d for d in analysis.diagnostics if d.severity is Severity.ERROR]
    assert [d.span.line for d in errors] == [line_of(EXPENSIVE, "later =")]
    assert [d.code for d in errors] == ["SH001"]


def test_code_within_its_budgets_gets_no_note() -> None:
    source = HEADER + "x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P('data')))\n"
    assert not [d for d in analyze(source).diagnostics if d.code == "SH214"]
