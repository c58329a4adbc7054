"""The context mesh made current by a `jax.set_mesh(m)` statement run inside a function, method or
constructor that the code calls (shardls/analysis/walker.py). The shard shapes are what JAX 0.10
gives on 8 CPU devices for the same programs."""

from __future__ import annotations

from pathlib import Path

from analysis_helpers import analyze, codes, site_named, workspace

from shardls.analysis.analyzer import Analyzer

HEAD = """
import dataclasses

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P
"""

CONFIG = """
@dataclasses.dataclass
class Config:
    mesh_shape: tuple = (4, 2)

    def __post_init__(self):
        self.mesh = jax.make_mesh(self.mesh_shape, ("data", "model"))
        jax.set_mesh(self.mesh)
"""

PUT = 'x = jax.device_put(jnp.zeros((8, 8)), P("data", "model"))\n'


def test_a_dataclass_post_init_sets_the_mesh_for_what_follows() -> None:
    analysis = analyze(HEAD + CONFIG + "cfg = Config(mesh_shape=(2, 4))\n" + PUT)
    site = site_named(analysis, "x")
    assert site.shard_shape == (4, 2)
    assert site.mesh is not None
    assert "in Config.__post_init__(), run by Config(mesh_shape=(2, 4)) at line" in site.mesh.selection
    assert not analysis.diagnostics


def test_constructors_methods_and_functions_set_it_inside_a_function() -> None:
    source = HEAD + (
        """
class Trainer:
    def __init__(self, shape):
        self.mesh = jax.make_mesh(shape, ("data", "model"))
        jax.set_mesh(self.mesh)

    def use(self, mesh):
        jax.set_mesh(mesh)


def use_mesh(shape):
    jax.set_mesh(jax.make_mesh(shape, ("data", "model")))


def main():
    trainer = Trainer((4, 2))
    a = jax.device_put(jnp.zeros((8, 8)), P("data", "model"))
    trainer.use(jax.make_mesh((2, 4), ("data", "model")))
    b = jax.device_put(jnp.zeros((8, 8)), P("data", "model"))
    use_mesh((1, 8))
    c = jax.device_put(jnp.zeros((8, 8)), P("data", "model"))


main()
"""
    )
    analysis = analyze(source)
    shards = {name: site_named(analysis, name).shard_shape for name in "abc"}
    assert shards == {"a": (2, 4), "b": (4, 2), "c": (8, 1)}
    assert not analysis.diagnostics


def test_a_branch_that_does_not_run_sets_no_mesh() -> None:
    source = HEAD + (
        """
def setup(on=False):
    if on:
        jax.set_mesh(jax.make_mesh((8, 1), ("data", "model")))


setup()
"""
    )
    assert codes(analyze(source + PUT)) == ["SH202"]
    assert site_named(analyze(source.replace("setup()", "setup(on=True)") + PUT), "x").shard_shape == (1, 8)


def test_a_setter_imported_from_the_workspace(tmp_path: Path) -> None:
    analyzer = workspace(
        tmp_path,
        {
            "config.py": "import dataclasses\nimport jax\n" + CONFIG,
            "train.py": HEAD + "from config import Config\n\ncfg = Config()\n" + PUT,
        },
    )
    train = tmp_path / "train.py"
    analysis = analyzer.analyze(str(train), train.read_text())
    assert site_named(analysis, "x").shard_shape == (2, 4)
    assert not analysis.diagnostics


def test_making_a_function_set_the_mesh_reanalyses_its_callers() -> None:
    """Only the callee's text changes; the statements after its call must see the mesh anyway."""
    mesh = 'MESH = jax.make_mesh((4, 2), ("data", "model"))\n'
    without = (
        HEAD + mesh + "\n\ndef setup():\n    pass\n\n\ndef main():\n    setup()\n    " + PUT + "\n\nmain()\n"
    )
    with_mesh = without.replace("    pass\n", "    jax.set_mesh(MESH)\n")
    analyzer = Analyzer()
    assert codes(analyzer.analyze("/virtual/model.py", without)) == ["SH202"]
    after = analyzer.analyze("/virtual/model.py", with_mesh)
    assert site_named(after, "x").shard_shape == (2, 4)
    assert not after.diagnostics
