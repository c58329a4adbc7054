"""Statements written inside branches on the device count, and after guards that exit on one
side (issue #12): a test decided only by the assumed count decides nothing, so both branches
run, each where the count is what the branch says of it, and what follows `if
jax.device_count() != 4: pytest.skip(...)` runs where there are 4 devices. A test decided by
values known from the code still decides, and a count the user states decides them all."""

from __future__ import annotations

from pathlib import Path

from analysis_helpers import analyze, site_named

from shardls.analysis.facts import FileAnalysis
from shardls.analysis.settings import Settings

PROGRAM = Path(__file__).parent.parent / "corpus" / "r62_device_count_guards.py"


def names(analysis: FileAnalysis) -> set[str]:
    return {site.name for site in analysis.sites if site.name is not None}


def mesh_sizes(analysis: FileAnalysis, name: str) -> tuple[int, ...]:
    mesh = site_named(analysis, name).mesh
    assert mesh is not None
    return mesh.mesh.axis_sizes


def test_every_branch_of_the_corpus_program_runs_on_the_assumed_count_without_a_problem() -> None:
    """The `== 1` and `>= 16` bodies and the code after `< 16: return` gain their sites; none of
    them is reported against the 8 devices it never runs with."""
    analysis = analyze(PROGRAM.read_text())
    assert analysis.diagnostics == ()
    assert {"inside", "alone", "spread", "guarded", "skipped_past", "far"} <= names(analysis)


def test_a_count_the_user_states_decides_the_branches_and_the_guards() -> None:
    """With 8 devices stated, as JAX runs the program: the other branches do not run."""
    stated = analyze(PROGRAM.read_text(), Settings(device_count=8))
    assert stated.diagnostics == ()
    assert names(stated) >= {"inside", "guarded", "skipped_past"}
    assert not names(stated) & {"alone", "spread", "far"}


def test_code_after_a_guard_runs_with_the_count_the_guard_leaves() -> None:
    """After `!= 4: pytest.skip`, the count is 4, known from the test: a mesh of all devices has 4."""
    analysis = analyze(
        """
        import jax
        import jax.numpy as jnp
        import pytest
        from jax.sharding import NamedSharding, PartitionSpec as P

        def test_four():
            if jax.device_count() != 4:
                pytest.skip("needs 4")
            mesh = jax.make_mesh((jax.device_count(),), ("x",))
            placed = jax.device_put(jnp.zeros((8, 2)), NamedSharding(mesh, P("x")))
        """
    )
    assert analysis.diagnostics == ()
    assert mesh_sizes(analysis, "placed") == (4,)
    assert site_named(analysis, "placed").assumptions == ()


def test_a_branch_for_one_device_does_not_warn_that_it_uses_one_of_eight() -> None:
    analysis = analyze(
        """
        import jax
        import jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P

        if jax.device_count() == 1:
            mesh = jax.make_mesh((1, 1), ("a", "b"))
            one = jax.device_put(jnp.zeros((3, 3)), NamedSharding(mesh, P("a", "b")))
        """
    )
    assert analysis.diagnostics == ()
    assert mesh_sizes(analysis, "one") == (1, 1)


def test_a_value_read_in_a_branch_has_the_count_the_branch_states() -> None:
    """A mesh of every device built before `if jax.device_count() == 2:` has 2 there, while
    the same mesh read outside the branch keeps the assumed 8."""
    analysis = analyze(
        """
        import jax
        import jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P

        mesh = jax.make_mesh((jax.device_count(),), ("x",))
        if jax.device_count() == 2:
            two = jax.device_put(jnp.zeros((6, 2)), NamedSharding(mesh, P("x")))
        eight = jax.device_put(jnp.zeros((8, 2)), NamedSharding(mesh, P("x")))
        """
    )
    assert analysis.diagnostics == ()
    assert mesh_sizes(analysis, "two") == (2,)
    assert mesh_sizes(analysis, "eight") == (8,)


def test_a_guard_the_code_decides_still_ends_the_block() -> None:
    """`if n < 8: return` with `n = 4` written in the code: what follows never runs."""
    analysis = analyze(
        """
        import jax
        import jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P

        def run():
            n = 4
            if n < 8:
                return
            mesh = jax.make_mesh((8,), ("x",))
            never = jax.device_put(jnp.zeros((8, 2)), NamedSharding(mesh, P("x")))
        """
    )
    assert "never" not in names(analysis)


def test_a_guard_that_exits_on_both_sides_ends_the_block() -> None:
    analysis = analyze(
        """
        import jax
        import jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P

        def run():
            if jax.device_count() >= 4:
                return 1
            else:
                raise ValueError("too few")
            mesh = jax.make_mesh((8,), ("x",))
            never = jax.device_put(jnp.zeros((8, 2)), NamedSharding(mesh, P("x")))
        """
    )
    assert "never" not in names(analysis)


def test_a_branch_the_assumed_count_contradicts_reports_no_problem_resting_on_the_count() -> None:
    """Inside `>= 16`, a 16-device mesh is not an SH104 on the assumed 8, but a layout JAX rejects
    on any machine (5 rows over 16) is still reported."""
    analysis = analyze(
        """
        import jax
        import jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P

        if jax.device_count() >= 16:
            mesh = jax.make_mesh((16,), ("x",))
            fine = jax.device_put(jnp.zeros((16, 2)), NamedSharding(mesh, P("x")))
            uneven = jax.device_put(jnp.zeros((5, 2)), NamedSharding(mesh, P("x")))
        """
    )
    assert {d.code for d in analysis.diagnostics} == {"SH001"}
    assert "fine" in names(analysis)


def test_a_global_a_test_rebinds_is_not_known_in_the_helpers_it_calls() -> None:
    """maxtext's sharding_test.py: `BATCH_SIZE = 1  # will be updated inside the test`, then the
    test (run after `!= 4: pytest.skip`) sets `global BATCH_SIZE` to the batch before calling
    the helper that reads it. The helper's 1 was an SH001 error JAX never raises."""
    analysis = analyze(
        """
        import jax
        import pytest
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

        BATCH_SIZE = 1

        def gen_data(key):
            return jax.random.uniform(key, (BATCH_SIZE, 16))

        def test_fsdp():
            if jax.device_count() != 4:
                pytest.skip("needs 4")
            global BATCH_SIZE
            BATCH_SIZE = len(jax.devices()) * 2
            mesh = jax.make_mesh((4,), ("fsdp",))
            made = jax.jit(gen_data, out_shardings=NamedSharding(mesh, P("fsdp")))(jax.random.key(0))
        """
    )
    assert [d for d in analysis.diagnostics if d.code == "SH001"] == []


def test_code_after_a_guard_that_leaves_one_device_runs_on_one() -> None:
    """jax's pallas tests: `if jax.device_count() > 1: self.skipTest(...)`, then a mesh of all
    devices: it has the one device left, not the 8 assumed."""
    analysis = analyze(
        """
        import unittest
        import jax
        import jax.numpy as jnp
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

        class T(unittest.TestCase):
            def test_single(self):
                if jax.device_count() > 1:
                    self.skipTest("single device")
                x = jax.device_put(jnp.zeros((8, 128)), NamedSharding(Mesh(jax.devices(), "x"), P("x")))
        """
    )
    assert analysis.diagnostics == ()
    assert mesh_sizes(analysis, "x") == (1,)
