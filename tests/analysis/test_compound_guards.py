"""Guards on the device count made of several tests (issue #12): `if jax.device_count() != 4 or
jax.process_count() != 1: self.skipTest(...)` (axlearn) leaves 4 devices, as the single test
does; one that leaves a few counts (`> 2 or num_cores != 2`: 1 or 2; `not in (4, 8)`) runs the
code after it once per count, each count one of several (so at most a warning rests on it); one
that leaves no small set keeps the default count, assumed as anywhere else. A `with
jax.set_mesh(...)` or `with mesh:` written in such a branch is evaluated with its count."""

from __future__ import annotations

from pathlib import Path

from analysis_helpers import analyze

from shardls.analysis.facts import FileAnalysis
from shardls.core import Severity


def layouts(analysis: FileAnalysis, name: str) -> set[tuple[tuple[int, ...], tuple[int, ...] | None]]:
    """The (mesh sizes, per-device shape) of every site of that name."""
    found = set()
    for site in analysis.sites:
        if site.name == name and site.mesh is not None and site.layout is not None:
            found.add((site.mesh.mesh.axis_sizes, site.layout.shard_shape))
    assert found, f"no laid-out site {name!r}"
    return found


PROGRAM = Path(__file__).parent.parent / "corpus" / "r66_compound_device_guards.py"

HEADER = """
import unittest
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

"""


def test_an_or_of_guards_that_exits_leaves_the_count_every_part_states() -> None:
    """axlearn's common/gradient_accumulation_test.py:111: after the guard, 4 devices, known."""
    analysis = analyze(
        HEADER
        + """
class T(unittest.TestCase):
    def test_four(self):
        if jax.device_count() != 4 or jax.process_count() != 1:
            self.skipTest("Incorrect device & process count for mesh.")
        mesh = jax.make_mesh((jax.device_count(),), ("x",))
        four = jax.device_put(jnp.zeros((8, 2)), NamedSharding(mesh, P("x")))
        uneven = jax.device_put(jnp.zeros((6, 2)), NamedSharding(mesh, P("x")))
"""
    )
    assert layouts(analysis, "four") == {((4,), (2, 2))}
    (problem,) = analysis.diagnostics
    assert problem.code == "SH001" and problem.severity is Severity.ERROR  # 6 over 4: known from the code


def test_a_guard_that_leaves_a_few_counts_runs_what_follows_once_per_count() -> None:
    """jax's pallas tests: `> 2 or num_cores != 2` leaves 1 or 2 devices: 6 rows divide on both,
    and nothing is reported against the 8 assumed."""
    analysis = analyze(
        HEADER
        + """
class T(unittest.TestCase):
    def test_cores(self):
        if jax.device_count() > 2 or jax.devices()[0].num_cores != 2:
            self.skipTest("single device two cores")
        mesh = jax.make_mesh((jax.device_count(),), ("x",))
        few = jax.device_put(jnp.zeros((6, 2)), NamedSharding(mesh, P("x")))
"""
    )
    assert analysis.diagnostics == ()
    assert layouts(analysis, "few") == {((1,), (6, 2)), ((2,), (3, 2))}


def test_a_problem_on_one_of_several_counts_is_a_warning_that_names_it() -> None:
    """jax's ragged_collective_test: `not in (4, 8)` exits; 12 rows divide over 4, not over 8,
    which is one of the counts the code runs with, not known to be the machine's."""
    analysis = analyze(
        HEADER
        + """
def test_in():
    num_devices = jax.device_count()
    if num_devices not in (4, 8):
        raise unittest.SkipTest("test requires 4 or 8 devices")
    mesh = jax.make_mesh((num_devices,), ("x",))
    some = jax.device_put(jnp.zeros((12, 2)), NamedSharding(mesh, P("x")))
"""
    )
    assert ((4,), (3, 2)) in layouts(analysis, "some")
    (problem,) = analysis.diagnostics
    assert problem.code == "SH001" and problem.severity is Severity.WARNING
    assert "8 devices (one of 4, 8, which the test at line 10 leaves)" in problem.message


def test_a_guard_that_leaves_no_small_set_keeps_the_assumed_count() -> None:
    """`< 2 or % 2 != 0` (tunix, maxtext) leaves every even count: the default 8 among them."""
    analysis = analyze(
        HEADER
        + """
def test_even():
    n = jax.device_count()
    if n < 2 or n % 2 != 0:
        raise unittest.SkipTest("needs an even count")
    mesh = jax.make_mesh((n // 2, 2), ("a", "b"))
    even = jax.device_put(jnp.zeros((8, 2)), NamedSharding(mesh, P("a", "b")))
"""
    )
    assert layouts(analysis, "even") == {((4, 2), (2, 1))}
    assert analysis.sites[-1].assumptions  # the default count, named


def test_an_and_of_tests_states_in_its_body_what_every_part_does() -> None:
    analysis = analyze(
        HEADER
        + """
if jax.device_count() <= 2 and jax.process_count() == 1:
    mesh = jax.make_mesh((jax.device_count(),), ("x",))
    both = jax.device_put(jnp.zeros((2, 2)), NamedSharding(mesh, P("x")))
"""
    )
    assert analysis.diagnostics == ()
    assert layouts(analysis, "both") == {((1,), (2, 2)), ((2,), (1, 2))}


def test_a_mesh_made_current_in_a_branch_has_the_count_the_branch_states() -> None:
    """`with jax.set_mesh(m):` and the deprecated `with m:` inside `if jax.device_count() == 2:`
    were evaluated with the 8 assumed: 6 rows over 8 was a warning the branch never meets."""
    analysis = analyze(
        HEADER
        + """
if jax.device_count() == 2:
    mesh = jax.make_mesh((jax.device_count(),), ("y",), axis_types=(jax.sharding.AxisType.Auto,))
    with jax.set_mesh(mesh):
        current = jax.device_put(jnp.zeros((6, 2)), P("y"))
    with mesh:
        constrained = jax.lax.with_sharding_constraint(jnp.zeros((6, 2)), P("y"))
"""
    )
    assert [d.code for d in analysis.diagnostics] == ["SH203"]  # `with mesh:` is deprecated
    assert layouts(analysis, "current") == {((2,), (3, 2))}
    assert layouts(analysis, "constrained") == {((2,), (3, 2))}


def test_the_corpus_program_runs_each_guarded_test_with_the_counts_its_guard_leaves() -> None:
    """r66 with the count only assumed: the first test's 8 devices are known from its guard (no
    assumption behind its layout); the second runs on 4 and on 8."""
    analysis = analyze(PROGRAM.read_text())
    assert analysis.diagnostics == ()
    (params,) = [s for s in analysis.sites if s.name == "params"]
    assert params.assumptions == ()
    assert layouts(analysis, "params") == {((4, 2), (4, 3))}
    assert layouts(analysis, "tokens") == {((4,), (3, 4)), ((8,), (3, 4))}
    assert layouts(analysis, "batch") == {((8,), (3, 2))}


def test_an_and_of_tests_that_exits_leaves_any_count() -> None:
    """tpu-inference's `if enable_attn_dp and num_devices < 2: pytest.skip(...)`: where the flag
    is off any count goes on, so the code after it keeps the assumed count."""
    analysis = analyze(
        HEADER
        + """
import pytest

def test_dp(enable_attn_dp):
    num_devices = jax.device_count()
    if enable_attn_dp and num_devices < 2:
        pytest.skip("enable_attn_dp requires at least 2 devices")
    mesh = jax.make_mesh((num_devices,), ("x",))
    any_count = jax.device_put(jnp.zeros((8, 2)), NamedSharding(mesh, P("x")))
"""
    )
    assert layouts(analysis, "any_count") == {((8,), (1, 2))}
    assert analysis.sites[-1].assumptions
