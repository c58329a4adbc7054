"""An error inside a block that expects an exception is the test's intent: an info naming the
block. Outside such blocks, and for warnings, nothing changes (tests/corpus/r17 runs the same
patterns under JAX)."""

from __future__ import annotations

from analysis_helpers import analyze

from shardls.core import Severity

SOURCE = """\
import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))

def test_rejects():
    with pytest.raises(ValueError), open("log") as log:
        jax.device_put(jnp.zeros((3, 4)), NamedSharding(mesh, P("data")))
    with jax.set_mesh(mesh):
        jax.device_put(jnp.zeros((5, 4)), NamedSharding(mesh, P("data")))

y = jax.device_put(jnp.zeros((7, 4)), NamedSharding(mesh, P("data")))
"""


def test_errors_a_test_expects_are_infos_and_the_others_stay_errors() -> None:
    found = {d.span.line + 1: d for d in analyze(SOURCE).diagnostics if d.code == "SH001"}
    assert sorted(found) == [10, 12, 14]
    expected = found[10]
    assert expected.severity is Severity.INFO
    assert "the `with pytest.raises(...)` at line 9 expects the code to raise" in expected.message
    assert found[12].severity is Severity.ERROR  # a `with` that expects nothing
    assert found[14].severity is Severity.ERROR
