"""An error inside a block that expects an exception is the test's intent: an info naming the
block. Outside such blocks, and for warnings, nothing changes (tests/corpus/r21 runs the same
patterns under JAX)."""

from __future__ import annotations

from analysis_helpers import analyze

from shardls.analysis.analyzer import Analyzer
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
    assert "(expected here: the `with pytest.raises(...)` at line 9 expects it)" in expected.message
    assert found[12].severity is Severity.ERROR  # a `with` that expects nothing
    assert found[14].severity is Severity.ERROR


HANDLED = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))

try:
    jax.device_put(jnp.zeros((3, 4)), NamedSharding(mesh, P("data")))
except Exception as error:
    print(error)

try:
    jax.device_put(jnp.zeros((5, 4)), NamedSharding(mesh, P("data")))
except ValueError:
    pass
"""


def test_an_error_a_broad_handler_catches_is_a_warning_and_one_class_changes_nothing() -> None:
    """JAX's tutorials show errors under `except Exception`; real code may hide a bug the same
    way, so it stays visible as a warning. `except ValueError` may not be the class JAX raises."""
    found = {d.span.line + 1: d for d in analyze(HANDLED).diagnostics if d.code == "SH001"}
    assert found[8].severity is Severity.WARNING
    assert "(the `except Exception` at line 9 catches it)" in found[8].message
    assert found[13].severity is Severity.ERROR


def test_blocks_kept_with_their_trees_move_with_an_edit_above_them() -> None:
    """The blocks of each statement are kept with its tree (an edit does not walk the statements
    it did not touch): after lines added and removed above, and the block's own statement edited,
    every message names the lines of the text analysed, as a fresh analysis does."""
    analyzer = Analyzer()
    edited = [
        SOURCE,
        SOURCE.replace("import pytest\n", "import pytest\n\n\n"),
        SOURCE.replace("import pytest\n", "import pytest\n\n\n").replace("(3, 4)", "(3, 8)"),
        SOURCE.replace("\nmesh = ", "mesh = "),
        HANDLED,
        HANDLED.replace("import jax\n", "import jax\n\n"),
    ]
    for text in edited:
        kept = analyzer.analyze("/virtual/model.py", text).diagnostics
        assert kept == Analyzer().analyze("/virtual/model.py", text).diagnostics
        assert any("at line" in d.message for d in kept)
