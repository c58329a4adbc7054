"""Configs outside the analysed function: absl and mlxu flag defaults, `ml_collections` configs
built in a `get_config()`, and mesh strings the code parses. Every value is a default a run can
override, so a problem resting on one is a warning that names it, and what the code never sets
stays unknown. (ml_collections is not installed with JAX here, so these are analyzer-only tests;
the absl flags are also run under JAX in `tests/corpus/r46_absl_flag_mesh_string.py`.)"""

from __future__ import annotations

from pathlib import Path

from shardls.analysis.facts import FileAnalysis, SymbolicDim
from shardls.analysis.settings import Settings
from shardls.core import Severity
from tests.analysis.analysis_helpers import analyze, line_of, site_named, workspace

STATED = Settings(device_count=8)
"""The device count is stated, so that only the defaults are assumptions."""

ABSL = """
import jax, jax.numpy as jnp
from absl import flags
from jax.sharding import NamedSharding, PartitionSpec as P

FLAGS = flags.FLAGS
flags.DEFINE_integer("dp", 2, "data parallelism")
_TP = flags.DEFINE_integer("tp", "4", "absl parses a string default")
flags.DEFINE_list("mesh_shape", "2, 4", "comma-separated")
flags.DEFINE_multi_integer("heads", 6, "one default is a list of one")
flags.DEFINE_integer("batch", None, "required")

def main(argv):
    mesh = jax.make_mesh((FLAGS.dp, _TP.value), ("data", "model"))
    a = jax.device_put(jnp.zeros((16, flags.FLAGS.heads[0])), NamedSharding(mesh, P("data", "model")))
    b = jax.device_put(jnp.zeros((FLAGS.batch, 8)), NamedSharding(mesh, P("data")))
    listed = jax.make_mesh(tuple(int(s) for s in FLAGS.mesh_shape), ("x", "y"))
    c = jax.device_put(jnp.zeros((FLAGS.undefined, 8)), NamedSharding(listed, P("x")))
"""


def _errors(analysis: FileAnalysis) -> list[str]:
    return [d.code for d in analysis.diagnostics if d.severity is Severity.ERROR]


def test_absl_flags_read_their_defaults_as_assumptions() -> None:
    analysis = analyze(ABSL, STATED)
    meshes = {m.name: m for m in analysis.meshes}
    assert meshes["mesh"].mesh.axis_sizes == (2, 4)
    assert "the default of --tp (a run may pass another value)" in meshes["mesh"].assumed
    assert meshes["listed"].mesh.axis_sizes == (2, 4)
    a = site_named(analysis, "a")
    assert a.shape == (16, 6)
    assert "absl flag default of --heads (overridable)" in a.provenance[1]
    (flagged,) = [d for d in analysis.diagnostics if d.code == "SH001"]
    assert flagged.severity is Severity.WARNING and "the default of --heads" in flagged.message
    assert not _errors(analysis)


def test_a_shape_from_two_flags_names_both_defaults() -> None:
    """Each dimension's assumption is the site's: the second flag's default is as much an
    assumption as the first's (jax_nccl_test's `(n_reps, n_devices_per_rep, 2**args.power)`)."""
    source = (
        ABSL + "    d = jax.device_put(jnp.zeros((FLAGS.dp, 2**FLAGS.heads[0])), NamedSharding(mesh, P()))\n"
    )
    d = site_named(analyze(source, STATED), "d")
    assert d.shape == (2, 64)
    assert {
        "the default of --dp (a run may pass another value)",
        "the default of --heads (a run may pass another value)",
    } <= set(d.assumptions)


def test_a_flag_without_a_default_or_not_defined_stays_unknown() -> None:
    analysis = analyze(ABSL, STATED)
    assert site_named(analysis, "b").shape[0] == SymbolicDim("batch")
    assert site_named(analysis, "c").shape[0] == SymbolicDim("undefined")


def test_a_flag_defined_in_an_imported_module(tmp_path: Path) -> None:
    analyzer = workspace(
        tmp_path,
        {
            "flagdefs.py": 'from absl import flags\nflags.DEFINE_integer("tp", 3, "")\n',
            "main.py": """
                import jax, jax.numpy as jnp
                from absl import flags
                import flagdefs
                from jax.sharding import NamedSharding, PartitionSpec as P
                mesh = jax.make_mesh((8 // 4, 4), ("data", "model"))
                x = jax.device_put(jnp.zeros((flags.FLAGS.tp, 8)), NamedSharding(mesh, P("model")))
            """,
        },
    )
    path = tmp_path / "main.py"
    analysis = analyzer.analyze(str(path), path.read_text(), STATED)
    (flagged,) = [d for d in analysis.diagnostics if d.code == "SH001"]
    assert flagged.severity is Severity.WARNING and "the default of --tp" in flagged.message


def test_a_mesh_string_parsed_by_the_code_keeps_the_assumption() -> None:
    analysis = analyze(
        """
        import jax, numpy as np
        import mlxu
        from jax.sharding import Mesh
        from jax.experimental import mesh_utils

        FLAGS, FLAGS_DEF = mlxu.define_flags_with_default(mesh_dim="1,-1,2", named="dp:2, mp:4")

        def get_jax_mesh(axis_dims, names):
            if axis_dims.startswith("!"):
                axis_dims = axis_dims[1:]
            dims = [int(x) for x in axis_dims.split(",")]
            mesh_shape = np.arange(jax.device_count()).reshape(dims).shape
            return Mesh(mesh_utils.create_device_mesh(mesh_shape), names)

        mesh = get_jax_mesh(FLAGS.mesh_dim, ("dp", "fsdp", "mp"))
        sizes = {k.strip(): int(v) for k, _, v in (p.partition(":") for p in FLAGS.named.split(","))}
        named = jax.make_mesh((sizes["dp"], sizes["mp"]), ("dp", "mp"))
        literal = jax.make_mesh(tuple(int(x) for x in FLAGS.mesh_dim.split(",")), ("a", "b", "c"))
        """,
        STATED,
    )
    meshes = {m.name: m for m in analysis.meshes}
    (built,) = [m for m in analysis.meshes if m.mesh.axis_names == ("dp", "fsdp", "mp")]
    assert built.mesh.axis_sizes == (1, 4, 2)
    assert meshes["named"].mesh.axis_sizes == (2, 4)
    assert "the default of --named (a run may pass another value)" in meshes["named"].assumed
    # make_mesh rejects a -1, but this one is only the default of a flag: a warning naming it.
    (rejected,) = [d for d in analysis.diagnostics if d.code == "SH103"]
    assert rejected.severity is Severity.WARNING and "the default of --mesh_dim" in rejected.message


def test_a_literal_minus_one_in_make_mesh_is_still_an_error() -> None:
    analysis = analyze(
        'import jax\nmesh = jax.make_mesh(tuple(int(x) for x in "1,-1".split(",")), ("a", "b"))\n'
    )
    assert _errors(analysis) == ["SH103"]


CONFIG = """
import ml_collections
from ml_collections import config_dict

def get_config():
    config = ml_collections.ConfigDict()
    config.mesh_shape = (2, 4)
    config.emb_dim = 1000
    config.model = ml_collections.ConfigDict()
    config.model.num_heads = 6
    config.model.head_dim = config.emb_dim // 10
    config.opt = ml_collections.ConfigDict({"batch": 64, "inner": {"k": 3}})
    config.seed = config_dict.placeholder(int)
    config.width = config_dict.FieldReference(16)
    return config
"""

TRAIN = """
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
from configs import default

def train(config):
    mesh = jax.make_mesh(config.mesh_shape, ("data", "model"))
    a = jax.device_put(jnp.zeros((config.model.num_heads, config.model.head_dim)), NamedSharding(mesh, P(None, "model")))
    b = jax.device_put(jnp.zeros((config.opt.batch, config.width)), NamedSharding(mesh, P("data", "model")))
    c = jax.device_put(jnp.zeros((config.opt.inner.k, config.seed)), NamedSharding(mesh, P(None, "data")))
    d = jax.device_put(jnp.zeros((config.never_set, config.get("absent", 8))), NamedSharding(mesh, P()))
    e = jax.device_put(jnp.zeros((config.model.num_heads, 8)), NamedSharding(mesh, P("model")))

train(default.get_config())
"""


def _train(tmp_path: Path, config: str = CONFIG) -> FileAnalysis:
    analyzer = workspace(
        tmp_path, {"configs/__init__.py": "", "configs/default.py": config, "train.py": TRAIN}
    )
    path = tmp_path / "train.py"
    return analyzer.analyze(str(path), path.read_text(), STATED)


def test_a_config_from_get_config_in_another_file(tmp_path: Path) -> None:
    analysis = _train(tmp_path)
    assert site_named(analysis, "a").shape == (6, 100)
    assert site_named(analysis, "b").shape == (64, 16)
    assert "config value config.model.head_dim (overridable)" in site_named(analysis, "a").provenance[1]
    assert site_named(analysis, "e").shape == (6, 8)
    (flagged,) = [d for d in analysis.diagnostics if d.code == "SH001"]
    assert flagged.span.line == line_of(TRAIN, " e = ")
    assert (
        flagged.severity is Severity.WARNING and "the config value config.model.num_heads" in flagged.message
    )
    assert not _errors(analysis)


def test_config_fields_not_set_or_placeholders_stay_unknown(tmp_path: Path) -> None:
    analysis = _train(tmp_path)
    c = site_named(analysis, "c")
    assert c.shape[0] == 3 and isinstance(c.shape[1], SymbolicDim)
    assert "a config placeholder, set at run time" in c.provenance[1]
    d = site_named(analysis, "d")
    assert d.shape == (SymbolicDim("config.never_set"), 8)


def test_a_config_changed_by_a_method_call_is_unknown(tmp_path: Path) -> None:
    changed = CONFIG.replace("    return config", "    config.update(emb_dim=2000)\n    return config")
    analysis = _train(tmp_path, changed)
    assert all(isinstance(dim, SymbolicDim) for dim in site_named(analysis, "a").shape)
    assert all(isinstance(dim, SymbolicDim) for dim in site_named(analysis, "b").shape)


def test_a_size_computed_from_a_flag_and_the_device_count_rests_on_both() -> None:
    """`args.n * jax.device_count()` names both assumptions, and an `if` on it is not decided by
    the assumed count: each branch's rows are laid out."""
    source = """
import argparse
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int, default=2)
args = parser.parse_args()
mesh = jax.make_mesh((8,), ("i",))
total = args.n * jax.device_count()
a = jax.device_put(jnp.zeros((total, 4)), NamedSharding(mesh, P("i")))
rows = 12 if total > 8 else 16
b = jax.device_put(jnp.zeros((rows, 4)), NamedSharding(mesh, P("i")))
"""
    analysis = analyze(source)
    (a,) = [s for s in analysis.sites if s.name == "a"]
    assert a.shape == (16, 4)
    assert any("--n" in note and "default device count" in note for note in a.assumptions)
    assert not any(n != m and n in m for n in a.assumptions for m in a.assumptions)  # said once
    assert sorted(s.shape for s in analysis.sites if s.name == "b") == [(12, 4), (16, 4)]
