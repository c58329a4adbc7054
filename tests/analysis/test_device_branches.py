"""Branches on the device count (issue #12): code that adapts to the machine states, inside a
branch, how many devices there are (`if num_tpus == 1: mesh_counts = (1, 1)`), and a mesh built
from what comes through it meets that count, known from the code; a branch the default count
contradicts (`if jax.device_count() >= 16:`) runs only elsewhere, so what rests on the count is
not reported for it. A count the user states still decides the branches."""

from __future__ import annotations

from pathlib import Path

import pytest
from analysis_helpers import analyze

from shardls.analysis.evaluation.device_branches import devices_stated
from shardls.analysis.evaluator import Evaluator
from shardls.analysis.facts import FileAnalysis
from shardls.analysis.file_settings import file_device_count, file_environment
from shardls.analysis.library import Library
from shardls.analysis.pragmas import Pragmas
from shardls.analysis.settings import Settings
from shardls.analysis.workspace import Workspace
from shardls.core import Severity

ADAPTING = """
import jax

num_tpus = len(jax.devices())
if num_tpus == 8:
    mesh_counts = (1, 4)
elif num_tpus == 1:
    mesh_counts = (1, 1)
else:
    raise ValueError(num_tpus)
mesh = jax.make_mesh(mesh_counts, ("fsdp", "tp"))
"""


def problems(analysis: FileAnalysis) -> list[tuple[str, Severity, str]]:
    return [(d.code, d.severity, d.message) for d in analysis.diagnostics]


def test_a_mesh_of_a_branch_that_states_the_count_meets_that_count() -> None:
    """The `== 1` branch's mesh uses its one device; the `== 8` branch's uses 4 of 8, known
    from the code there rather than assumed."""
    analysis = analyze(ADAPTING)
    assert [(code, severity) for code, severity, _ in problems(analysis)] == [("SH107", Severity.INFO)]
    assert "first 4 of 8 devices" in analysis.diagnostics[0].message
    assert analysis.diagnostics[0].assumptions == ()


def branching(test: str, then: str, otherwise: str, names: str = '("data", "model")') -> FileAnalysis:
    """The analysis of a mesh built from a shape set by an `if` on `test` and its `else`."""
    return analyze(
        f"""
        import jax

        num_tpus = len(jax.devices())
        if {test}:
            shape = {then}
        else:
            shape = {otherwise}
        mesh = jax.make_mesh(shape, {names})
        """
    )


@pytest.mark.parametrize("test", ["num_tpus != 1", "jax.device_count() != 1", "1 != len(jax.devices())"])
def test_the_else_branch_of_an_inequality_states_the_count(test: str) -> None:
    assert problems(branching(test, "(2, num_tpus // 2)", "(1, 1)")) == []


def test_a_branch_the_default_count_contradicts_reports_nothing_resting_on_the_count() -> None:
    """16 devices are needed only where there are at least 16: not an SH104 on 8 assumed."""
    assert problems(branching("jax.device_count() >= 16", "(4, 4)", "(2, num_tpus // 2)")) == []


def test_a_problem_of_the_mesh_itself_is_still_reported_in_a_branch_run_elsewhere() -> None:
    analysis = branching("jax.device_count() >= 16", "(4, 4)", "(2, 4)", '("data", "data")')
    assert {code for code, _, _ in problems(analysis)} == {"SH101"}


def test_a_comparison_of_a_number_computed_from_the_count_states_no_count() -> None:
    """`n // 2 == 1` holds on 2 or 3 devices: the branch runs elsewhere, nothing stated."""
    assert problems(branching("num_tpus // 2 == 1", "(1, 1)", "(2, 4)")) == []


def test_a_count_the_user_states_still_decides_the_branches() -> None:
    """With 1 device stated only the `== 1` branch runs; with 8, only the `== 8` one, whose
    mesh uses 4 of them as a fact."""
    assert problems(analyze(ADAPTING, Settings(device_count=1))) == []
    stated = analyze(ADAPTING, Settings(device_count=8))
    assert [(code, severity) for code, severity, _ in problems(stated)] == [("SH107", Severity.INFO)]
    assert "first 4 of 8 devices" in stated.diagnostics[0].message


def test_the_corpus_program_adapting_to_the_machine_has_no_problem_on_the_assumed_count() -> None:
    program = Path(__file__).parent.parent / "corpus" / "r60_device_count_branches.py"
    assert problems(analyze(program.read_text())) == []


DEVICE_ARRAY_IN_BRANCHES = """
import jax
import numpy as np

if len(jax.devices()) == 8:
    grid = np.asarray(jax.devices()).reshape((3, 3))
else:
    grid = np.asarray(jax.devices()).reshape((1, 1))
mesh = jax.sharding.Mesh(grid, ("a", "b"))
"""


def test_a_device_array_reshaped_in_a_branch_meets_the_count_the_branch_states() -> None:
    """The device array is reshaped where the name is bound, before any reader could narrow the
    count: the binding itself is computed with the count its branches state. The `== 8` branch's
    (3, 3) is rejected on the 8 devices its test states (an error, known from the code); the
    `else`'s (1, 1) runs on other machines, and says nothing of 8 devices."""
    found = problems(analyze(DEVICE_ARRAY_IN_BRANCHES))
    assert [(code, severity) for code, severity, _ in found] == [("SH105", Severity.ERROR)]
    assert "shape (3, 3)" in found[0][2] and "default device count" not in found[0][2]


def test_the_corpus_program_shaping_devices_per_branch_has_no_problem_on_the_assumed_count() -> None:
    """vmoe's `else: devices = devices.reshape((1, 1))` after `if devices.size > 1:` (and `len()`
    of a device array compared with 1) runs on one device: it was an SH105 warning on 8."""
    program = Path(__file__).parent.parent / "corpus" / "r80_device_array_branches.py"
    assert problems(analyze(program.read_text())) == []


DEVICE_ARRAY_ARGUMENT = """
import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

def initialize_mesh(shape, device_array=None):
    if device_array is None:
        device_array = np.array(jax.devices())
    return Mesh(device_array.reshape(shape), ("dp", "tp"))

mesh = initialize_mesh((1, 1), device_array=np.array(jax.devices())[0:1])
x = jax.device_put(np.zeros((4, 4)), NamedSharding(mesh, P("dp")))
"""


def test_a_device_array_passed_for_an_optional_one_is_not_none() -> None:
    """xlstm-jax's `initialize_mesh(config, device_array=np.array(jax.devices())[0:1])`: a device
    array is never None, so the `is None` branch (all 8 assumed devices reshaped into the one-device
    shape, a false SH105) does not run, and the mesh is the one device's."""
    analysis = analyze(DEVICE_ARRAY_ARGUMENT)
    assert problems(analysis) == []
    site = next(s for s in analysis.sites if s.name == "x")
    assert site.shard_shape == (4, 4) and site.mesh is not None and site.mesh.mesh.size == 1


def test_the_corpus_program_passing_one_device_has_no_problem() -> None:
    program = Path(__file__).parent.parent / "corpus" / "r83_device_array_argument.py"
    assert problems(analyze(program.read_text())) == []


def test_where_no_branch_states_a_count_entering_one_does_nothing() -> None:
    """The walker enters `devices_stated` for every statement: with no guard, or no test that
    states a count, it makes no generator and sets nothing (one shared manager)."""
    settings = Settings()
    evaluator = Evaluator(
        Workspace(), Library(file_environment(file_device_count(Pragmas(), settings), settings))
    )
    guard = frozenset({(1, True)})
    assert devices_stated(evaluator, frozenset()) is devices_stated(evaluator, guard, 4)
    memos = evaluator.memos
    with devices_stated(evaluator, guard):
        assert evaluator.memos is memos
