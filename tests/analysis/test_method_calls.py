"""Methods of plain classes run with `self` the instance the code calls them on, test methods with
the instance `setUp` prepares (recognizers/method_calls.py), and what that exposed: a spec built
per call of a function that wraps a nested `def` meets only that call's arrays, a mesh chosen by
the default device count is not a fact, and `nnx.get_abstract_model` makes its mesh current."""

from __future__ import annotations

from analysis_helpers import analyze, codes, site_named

from shardls.analysis.facts import FileAnalysis, Severity

HEADER = """
import functools, unittest
import jax, jax.numpy as jnp, numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
"""


def _shapes(analysis: FileAnalysis, name: str) -> list[tuple[object, ...]]:
    return sorted((tuple(s.shard_shape or ()) for s in analysis.sites if s.name == name), key=repr)


SHARDER = """
class Sharder:
    def __init__(self, mesh):
        self.mesh = mesh

    def put(self, x, spec):
        placed = jax.device_put(x, NamedSharding(self.mesh, spec))
        return placed

    def put_rows(self, x):
        return self.put(x, P("data", None))
"""


def test_a_method_called_on_an_instance_reads_the_instance_and_the_arguments() -> None:
    analysis = analyze(
        HEADER
        + SHARDER
        + """
mesh = jax.make_mesh((4, 2), ("data", "model"))
sharder = Sharder(mesh)
a = sharder.put(jnp.zeros((8, 6)), P("data", "model"))
b = sharder.put_rows(jnp.zeros((16, 3)))
"""
    )
    assert _shapes(analysis, "placed") == [(2, 3), (4, 3)]
    assert any("put(...) at line" in a for a in site_named(analysis, "placed").assumptions)
    assert not analysis.diagnostics


def test_a_method_nobody_calls_keeps_an_unknown_self() -> None:
    analysis = analyze(HEADER + SHARDER + 'mesh = jax.make_mesh((4, 2), ("data", "model"))\n')
    assert not [
        s for s in analysis.sites if s.name == "placed" and (s.shape is not None or s.mesh is not None)
    ]


def test_a_test_method_runs_on_the_instance_set_up_prepares() -> None:
    analysis = analyze(
        HEADER
        + """
class ShardingTest(unittest.TestCase):
    def setUp(self):
        self.mesh = Mesh(np.array(jax.devices()).reshape(4, 2), ("data", "model"))
        self.rows = NamedSharding(self.mesh, P("data", None))

    def _place(self, x):
        column = jax.device_put(x, NamedSharding(self.mesh, P(None, "model")))
        return column

    def test_placed(self):
        batch = jax.device_put(jnp.zeros((8, 6)), self.rows)
        self._place(jnp.ones((3, 4)))
"""
    )
    assert site_named(analysis, "batch").shard_shape == (2, 6)
    assert site_named(analysis, "column").shard_shape == (3, 2)
    assert [u.name for u in site_named(analysis, "rows").uses] == ["batch"]


def test_a_nested_wrapped_function_meets_only_its_own_calls_arrays() -> None:
    analysis = analyze(
        HEADER
        + """
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("context", "x"))

def run(x):
    pspec = P(*tuple((None if i != 1 else "context") for i in range(x.ndim)))

    @functools.partial(jax.shard_map, mesh=mesh, in_specs=pspec, out_specs=pspec)
    def shift(local):
        return local + 1

    return shift(x)

flat = run(jnp.zeros((1, 16)))
cube = run(jnp.zeros((2, 16, 4)))
"""
    )
    assert _shapes(analysis, "local") == [(1, 8), (2, 8, 4)]
    assert not analysis.diagnostics


def test_a_mesh_chosen_by_the_default_device_count_decides_no_error() -> None:
    analysis = analyze(
        HEADER
        + """
def make_test_mesh():
    devices = jax.local_devices()
    if len(devices) >= 4:
        grid = np.array(devices[:4]).reshape(2, 2)
    else:
        grid = np.array(devices[:1]).reshape(1, 1)
    return Mesh(grid, ("fsdp", "stage"))

mesh = make_test_mesh()
with jax.set_mesh(mesh):
    v = nnx.Param(jnp.zeros((3,)), out_sharding=("fsdp",))
"""
    )
    assert not [d for d in analysis.diagnostics if d.severity is Severity.ERROR]


def test_a_branch_on_a_stated_device_count_is_taken() -> None:
    analysis = analyze(
        "# shardls: device-count=8\n"
        + HEADER
        + """
if len(jax.devices()) >= 4:
    grid = np.array(jax.devices()[:4]).reshape(2, 2)
else:
    grid = np.array(jax.devices()[:1]).reshape(1, 1)
mesh = Mesh(grid, ("fsdp", "stage"))
x = jax.device_put(jnp.zeros((3,)), NamedSharding(mesh, P("fsdp")))
"""
    )
    assert codes(analysis) == ["SH001"]


def test_set_mesh_of_an_unknown_mesh_may_make_one_current() -> None:
    analysis = analyze(
        HEADER
        + """
from somewhere import get_mesh

with jax.set_mesh(get_mesh()):
    v = nnx.Param(jnp.zeros((3,)), out_sharding=("embed",))
"""
    )
    assert "SH201" not in codes(analysis)


def test_get_abstract_model_builds_the_model_under_its_mesh() -> None:
    analysis = analyze(
        HEADER
        + """
mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)

class Block(nnx.Module):
    def __init__(self, rngs):
        self.w = nnx.Param(jnp.zeros((64, 8)), out_sharding=("model", None))

graphdef, state = nnx.get_abstract_model(lambda: Block(nnx.Rngs(0)), mesh)
"""
    )
    assert "SH201" not in codes(analysis)
    assert site_named(analysis, "w").shard_shape == (16, 8)
