"""Certainty: an error only from facts the code or the user states.

Each case is modelled on real code where shardls reported a false error (docs/realcode.md): a
problem that rests on the default device count, a flag's default, a mesh size not known here or
a mesh shardls picked is at most a warning that names what it assumed; an unknown value never
collapses into a concrete one (a list grown in a loop, a reshape to an unknown shape).
"""

from __future__ import annotations

import pytest

from shardls.analysis.analyzer import Analyzer
from shardls.analysis.facts import Diagnostic, FileAnalysis
from shardls.analysis.settings import Settings
from shardls.analysis.walking.contexts import ASSUMED_UNDER_JIT
from shardls.analysis.workspace import Workspace
from shardls.core import Severity
from tests.analysis.analysis_helpers import analyze

NOTEBOOK_CELL = """\
import jax, jax.numpy as jnp
mesh = jax.make_mesh((jax.device_count(),), ("fsdp",))
with jax.set_mesh(mesh):
    x = jnp.ones((4, 256, 256, 3), out_sharding=jax.P("fsdp"))
"""

TOO_LARGE = """\
import jax
mesh = jax.make_mesh((4, 4), ("data", "model"))
"""

ARGPARSE_FOR_FOUR_CHIPS = """\
import argparse
import jax
from jax.experimental import mesh_utils
from jax.sharding import Mesh

parser = argparse.ArgumentParser()
parser.add_argument("--ici_fsdp_parallelism", type=int, default=4)
args = parser.parse_args()
ici_parallelism = [1, args.ici_fsdp_parallelism, 1]
mesh = Mesh(mesh_utils.create_device_mesh(ici_parallelism), ["data", "fsdp", "tensor"])
"""

SUMMED_COUNT = """\
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((4,), ("x",))
n = sum([len(jax.devices()), 2], 0)
x = jax.device_put(jnp.zeros((n,)), NamedSharding(mesh, P("x")))
"""

LARGEST_COUNT = """\
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((4,), ("x",))
n = max(len(jax.devices()), 2) + len(list(range(jax.device_count())))
x = jax.device_put(jnp.zeros((n - 6,)), NamedSharding(mesh, P("x")))
"""

COUNT_OVER_SIXTEEN = """\
import jax
from jax.experimental import mesh_utils
n = len(jax.devices()) // 16
mesh = jax.sharding.Mesh(mesh_utils.create_device_mesh((1, 16, n)), ("a", "b", "c"))
"""


def errors(analysis: FileAnalysis) -> list[Diagnostic]:
    return [d for d in analysis.diagnostics if d.severity is Severity.ERROR]


def coded(analysis: FileAnalysis, code: str) -> list[Diagnostic]:
    return [d for d in analysis.diagnostics if d.code == code]


ON_THE_DEFAULT_COUNT = pytest.mark.parametrize(
    ("source", "code"),
    [
        (NOTEBOOK_CELL, "SH001"),
        (TOO_LARGE, "SH104"),
        (SUMMED_COUNT, "SH001"),
        (LARGEST_COUNT, "SH001"),
        (COUNT_OVER_SIXTEEN, "SH103"),
    ],
    ids=["cell", "too-large", "summed", "max-and-range", "size-zero"],
)
"""Programs with a problem only on the device count they are checked with: a warning on the
default count, an error on a stated one."""


@ON_THE_DEFAULT_COUNT
def test_a_problem_that_needs_the_default_device_count_is_a_warning_naming_it(source: str, code: str) -> None:
    analysis = analyze(source)
    assert not errors(analysis)
    flagged = coded(analysis, code)
    assert flagged and all(d.severity is Severity.WARNING for d in flagged)
    assert all("8 devices (default device count" in d.message for d in flagged)
    assert all(d.assumptions and "8 devices" in d.assumptions[0] for d in flagged)
    assert all(d.data["assumptions"] == list(d.assumptions) for d in flagged)


@ON_THE_DEFAULT_COUNT
@pytest.mark.parametrize(
    "stated",
    [
        lambda text: analyze("# shardls: device-count=8\n" + text),
        lambda text: analyze(text, Settings(device_count=8)),
        lambda text: analyze(
            'import os\nos.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"\n' + text
        ),
    ],
    ids=["pragma", "setting", "XLA_FLAGS"],
)
def test_a_stated_device_count_makes_it_an_error(source: str, code: str, stated) -> None:  # type: ignore[no-untyped-def]
    flagged = coded(stated(source), code)
    assert flagged and all(d.severity is Severity.ERROR and not d.assumptions for d in flagged)


def test_a_flag_default_is_an_assumption_even_with_a_stated_device_count() -> None:
    analysis = analyze(ARGPARSE_FOR_FOUR_CHIPS, Settings(device_count=8))
    flagged = coded(analysis, "SH105")
    assert flagged and all(d.severity is Severity.WARNING for d in flagged)
    assert "the default of --ici_fsdp_parallelism" in flagged[0].message


def test_a_mesh_size_not_known_here_fills_the_devices_as_an_assumption() -> None:
    analysis = analyze(
        """
        import jax, jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P

        def build(dp):
            mesh = jax.make_mesh((dp, 4), ("data", "model"))
            return jax.device_put(jnp.zeros((5, 8)), NamedSharding(mesh, P("data")))
        """,
        Settings(device_count=8),
    )
    flagged = coded(analysis, "SH001")
    assert flagged and not errors(analysis)
    assert "mesh size 0 is not known here" in flagged[0].message


def test_a_literal_mesh_on_a_stated_count_keeps_its_errors() -> None:
    analysis = analyze(
        """
        import jax, jax.numpy as jnp
        from jax.sharding import NamedSharding, PartitionSpec as P
        mesh = jax.make_mesh((2, 4), ("data", "model"))
        x = jax.device_put(jnp.zeros((50257, 8)), NamedSharding(mesh, P("model")))
        """
    )
    assert [d.code for d in errors(analysis)] == ["SH001"]


FALLBACK_FILE = """
import jax, jax.numpy as jnp
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))

def constrain(x):
    return jax.lax.with_sharding_constraint(x, P(None, "x", None))
"""


def test_a_mesh_shardls_picks_shows_a_layout_but_decides_no_problem() -> None:
    analysis = analyze(FALLBACK_FILE)
    assert not analysis.diagnostics
    site = next(s for s in analysis.sites if s.spec is not None and "x" in s.spec.display())
    # The file's only mesh has no axis x, so it is not the mesh that applies: no layout on it.
    assert site.mesh is None
    shown = analyze(FALLBACK_FILE.replace('"x"', '"model"')).sites[0]
    assert shown.mesh is not None and shown.mesh.fallback
    assert shown.mesh.selection == "the only mesh in this file"


def test_a_mesh_pragma_is_stated_and_decides_problems() -> None:
    analysis = analyze(
        "# shardls: mesh=data=2,model=4\n"
        + FALLBACK_FILE.replace('mesh = jax.make_mesh((2, 4), ("data", "model"))', "")
    )
    assert [d.code for d in errors(analysis)] == ["SH005"]


def test_the_only_mesh_of_the_workspace_decides_no_problem(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "train.py").write_text('import jax\nmesh = jax.make_mesh((8,), ("fsdp",))\n')
    model = tmp_path / "model.py"
    model.write_text(
        "import jax\nfrom jax.sharding import PartitionSpec as P\n\n"
        "def attn(q):\n    return jax.lax.with_sharding_constraint(q, P(None, 'fsdp', None, None))\n"
    )
    analysis = Analyzer(Workspace([tmp_path])).analyze(str(model), model.read_text())
    assert not analysis.diagnostics
    assert any(s.mesh is not None and s.mesh.fallback for s in analysis.sites)


def test_a_list_appended_in_a_loop_stays_unknown() -> None:
    """EasyLM's get_jax_mesh: names appended in a loop over an unknown string were `()`."""
    analysis = analyze(
        """
        import jax
        import numpy as np
        from jax.sharding import Mesh

        def get_jax_mesh(axis_dims, names):
            dims, dim_names = [], []
            for axis in axis_dims.split(","):
                name, dim = axis.split(":")
                dims.append(int(dim))
                dim_names.append(name)
            mesh_shape = np.arange(jax.device_count()).reshape(dims).shape
            return Mesh(np.array(jax.devices()).reshape(mesh_shape), dim_names)
        """
    )
    assert not analysis.diagnostics


def test_a_list_appended_without_a_loop_is_known() -> None:
    analysis = analyze(
        """
        import jax, jax.numpy as jnp
        import numpy as np
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

        names = ["data"]
        names.append("model")
        sizes = [2]
        sizes.extend([4])
        mesh = Mesh(np.array(jax.devices()).reshape(sizes), names)
        x = jax.device_put(jnp.zeros((6, 8)), NamedSharding(mesh, P("model")))  # 6 % 4 != 0
        """,
        Settings(device_count=8),
    )
    assert [d.code for d in errors(analysis)] == ["SH001"]
    assert analysis.meshes[0].mesh.axis_names == ("data", "model")


def test_a_method_of_a_module_is_no_mutation() -> None:
    """`nnx.update(...)` calls a function of a module, it does not change a list named nnx."""
    analysis = analyze(
        """
        import jax
        import numpy as np
        from jax.sharding import Mesh
        names = ("data", "model")
        np.update(names)
        mesh = Mesh(np.array(jax.devices()).reshape(2, 4), names)
        """
    )
    assert analysis.meshes and analysis.meshes[0].mesh.axis_names == ("data", "model")


def test_reshape_to_an_unknown_shape_has_an_unknown_rank() -> None:
    analysis = analyze(
        """
        import jax
        import numpy as np
        from jax.sharding import Mesh

        def mesh_of(mesh_shape, names):
            return Mesh(np.array(jax.devices()).reshape(mesh_shape), names)

        mesh = mesh_of(SHAPE, ("dp", "mp"))
        """
    )
    assert not coded(analysis, "SH102")


@pytest.mark.parametrize(
    "guard",
    [
        'pytest.skip("needs 4 devices")',
        "sys.exit(0)",
        "_fail('needs 4 devices')",
    ],
)
def test_a_call_that_never_returns_ends_its_branch(guard: str) -> None:
    analysis = analyze(
        f"""
        import sys
        import jax
        import pytest
        from jax.experimental import mesh_utils
        from jax.sharding import Mesh

        def _fail(message):
            raise RuntimeError(message)

        def test_fsdp():
            if jax.device_count() != 4:
                {guard}
            mesh = Mesh(mesh_utils.create_device_mesh([1, 4, 1]), ["data", "fsdp", "tensor"])
        """,
        Settings(device_count=8),
    )
    assert not analysis.diagnostics


def test_skip_test_of_a_test_case_ends_its_branch() -> None:
    analysis = analyze(
        """
        import unittest
        import jax
        from jax.experimental import mesh_utils
        from jax.sharding import Mesh

        class T(unittest.TestCase):
            def test_fsdp(self):
                if jax.device_count() != 4:
                    self.skipTest("needs 4 devices")
                mesh = Mesh(mesh_utils.create_device_mesh([1, 4, 1]), ["data", "fsdp", "tensor"])
        """,
        Settings(device_count=8),
    )
    assert not analysis.diagnostics


def test_a_branch_without_an_exit_is_still_followed() -> None:
    analysis = analyze(
        """
        import jax
        from jax.experimental import mesh_utils
        from jax.sharding import Mesh

        def test_fsdp():
            if jax.device_count() != 4:
                print("not 4 devices")
            mesh = Mesh(mesh_utils.create_device_mesh([1, 4, 1]), ["data", "fsdp", "tensor"])
        """,
        Settings(device_count=8),
    )
    assert [d.code for d in errors(analysis)] == ["SH105"]


def test_a_with_block_whose_mesh_is_not_known_may_provide_one() -> None:
    """MaxText's shmap example: `with global_mesh:` built from devices shardls cannot follow."""
    analysis = analyze(
        """
        import jax, jax.numpy as jnp
        from jax.experimental.pjit import pjit
        from jax.sharding import PartitionSpec as P
        from somewhere import global_mesh

        data_fn = pjit(lambda: jnp.zeros((8, 16)), out_shardings=P("fsdp", "tp"))

        def main():
            with global_mesh:
                activations = data_fn()
        """
    )
    assert not coded(analysis, "SH202")


def test_no_mesh_at_all_is_still_reported() -> None:
    analysis = analyze(
        """
        import jax, jax.numpy as jnp
        from jax.sharding import PartitionSpec as P
        x = jax.device_put(jnp.zeros((8, 16)), P("fsdp"))
        """
    )
    assert [d.code for d in errors(analysis)] == ["SH202"]


BRANCHES = """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

def run(broadcast):
    mesh = jax.make_mesh((2, 2), ("dp", "tp"))
    if broadcast:
        bias = jnp.zeros((1, 4, 16))
        spec = P(None, "tp", None)
        rows_axis = None
    else:
        bias = jnp.zeros((4, 4, 16))
        spec = P("dp", "tp", None)
        rows_axis = "dp"
    rows = bias.shape[0] + 0
    flat = jnp.zeros((rows, 16))
    sharding = NamedSharding(mesh, spec)
    return jax.device_put(bias, sharding), jax.device_put(flat, NamedSharding(mesh, P(rows_axis)))
"""


def test_values_set_in_one_branch_are_never_combined_with_the_other_branch() -> None:
    """jax's fused_attention_stablehlo_multigpu_test.py sets a bias and its spec in each branch
    of an `if` on a test parameter: a [1, ...] bias of one branch met the P("dp", ...) of the other
    (a false SH001). Both branches run under JAX 0.10 without an error."""
    analysis = analyze(BRANCHES, Settings(device_count=4))
    assert not analysis.diagnostics
    placed = {
        (site.name, str(site.shape), str(site.spec.entries))
        for site in analysis.sites
        if site.spec and site.name in ("bias", "flat")
    }
    assert placed == {
        ("bias", "(1, 4, 16)", "(None, 'tp', None)"),
        ("bias", "(4, 4, 16)", "('dp', 'tp', None)"),
        ("flat", "(1, 16)", "(None,)"),
        ("flat", "(4, 16)", "('dp',)"),
    }


CONSTRAINTS_IN_FUNCTIONS = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()), ("x",))


def constrain():
    return jax.lax.with_sharding_constraint(jnp.ones((2, 3)), NamedSharding(mesh, P("x")))


@jax.jit
def constrain_jit():
    return jax.lax.with_sharding_constraint(jnp.ones((2, 3)), NamedSharding(mesh, P("x")))
"""


def test_padding_in_a_function_only_assumed_to_be_jitted_names_that_assumption() -> None:
    """simply's tests constrain a (2, 3) array in plain test methods over 8 devices: JAX 0.10 raises
    IndivisibleError there (eagerly), while under jit XLA pads. shardls assumes a function with no
    visible jit runs under one, so its SH007 says so and what happens eagerly; a jitted function's
    padding rests on no such assumption (the device count is stated, so nothing else is assumed)."""
    analysis = analyze(CONSTRAINTS_IN_FUNCTIONS, Settings(device_count=8))
    padding = {d.span.line: d for d in analysis.diagnostics if d.code == "SH007"}
    assert sorted(padding) == [9, 14]
    assumed, jitted = padding[9], padding[14]
    assert assumed.severity is jitted.severity is Severity.WARNING
    assert assumed.assumptions == (ASSUMED_UNDER_JIT,)
    assert assumed.message.endswith(
        f"(if {ASSUMED_UNDER_JIT}: run eagerly, JAX rejects the dimension instead of padding it)"
    )
    assert jitted.assumptions == ()
    assert "assumed" not in jitted.message


def test_bytes_of_an_array_of_unknown_dtype_name_the_dtype_they_assume() -> None:
    """`dtype=DTYPE` from a module not read: the bytes shown rest on the default dtype, so the
    site says so; a dtype the code writes adds no such note."""
    source = (
        "import jax, jax.numpy as jnp\n"
        "from jax.sharding import NamedSharding, PartitionSpec as P\n"
        "from config import DTYPE\n"
        "mesh = jax.make_mesh((8,), ('i',))\n"
        "a = jax.device_put(jnp.zeros((16, 4), dtype=DTYPE), NamedSharding(mesh, P('i')))\n"
        "b = jax.device_put(jnp.zeros((16, 4), dtype=jnp.bfloat16), NamedSharding(mesh, P('i')))\n"
    )
    sites = {s.name: s for s in analyze(source, Settings(device_count=8)).sites}
    assert sites["a"].shard_shape == (2, 4)
    assert "dtype not known here: bytes assume float32" in sites["a"].assumptions
    assert not any("dtype" in note for note in sites["b"].assumptions)
