"""YAML configs read without running code (`library/yaml_files.py`, `library/paths.py`): a file of
the workspace named by a path shardls evaluates, read with the safe loader; every value is an
assumption naming its file and key, so a problem resting on one is a warning; what cannot be read
safely stays unknown. (The MaxText-style loader with a model file and `key=value` overrides is run
under JAX in `tests/corpus/r51_yaml_config/`.)"""

from __future__ import annotations

import textwrap
from pathlib import Path

from shardls.analysis.facts import SymbolicDim
from shardls.analysis.settings import Settings
from shardls.core import Severity
from tests.analysis.analysis_helpers import site_named, workspace

STATED = Settings(device_count=8)

BASE = """
mesh_axes: ['data', 'model']
ici_data_parallelism: 2
ici_model_parallelism: 4
vocab_size: 1002
emb_dim: 64
defaults: &defaults
  heads: 8
attention:
  <<: *defaults
"""

PROGRAM = """
import os
import jax, jax.numpy as jnp
import yaml
from jax.sharding import NamedSharding, PartitionSpec as P

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", "base.yml")
with open(CONFIG) as f:
    cfg = yaml.safe_load(f)

mesh = jax.make_mesh((cfg["ici_data_parallelism"], cfg["ici_model_parallelism"]), tuple(cfg["mesh_axes"]))
table = jax.device_put(jnp.zeros((cfg["vocab_size"], cfg["emb_dim"])), NamedSharding(mesh, P("model")))
heads = jax.device_put(jnp.zeros((cfg["attention"]["heads"], 8)), NamedSharding(mesh, P("model")))
"""


def _analyze(tmp_path: Path, program: str, base: str = BASE) -> object:
    analyzer = workspace(tmp_path, {"configs/base.yml": base, "train.py": program})
    path = tmp_path / "train.py"
    return analyzer, analyzer.analyze(str(path), path.read_text(), STATED)


def test_values_from_a_yaml_file_are_assumptions_named_in_a_warning(tmp_path: Path) -> None:
    _, analysis = _analyze(tmp_path, PROGRAM)
    mesh = {m.name: m for m in analysis.meshes}["mesh"]
    assert mesh.mesh.axis_sizes == (2, 4)
    assert "ici_model_parallelism=4 from base.yml (a run may override it)" in mesh.assumed
    table = site_named(analysis, "table")
    assert table.shape == (1002, 64)
    assert "from base.yml: vocab_size=1002" in table.provenance[0]
    assert site_named(analysis, "heads").shape == (8, 8)  # a merge key, as the safe loader reads it
    (uneven,) = [d for d in analysis.diagnostics if d.code == "SH001"]
    assert uneven.severity is Severity.WARNING
    assert "vocab_size=1002 from base.yml (a run may override it)" in uneven.message
    assert not [d for d in analysis.diagnostics if d.severity is Severity.ERROR]


def test_an_edited_yaml_file_is_read_again(tmp_path: Path) -> None:
    """On disk (a `check` run) and in the editor (the server's text of the file), by the same
    Analyzer, whose kept results read the file."""
    analyzer, _ = _analyze(tmp_path, PROGRAM)
    config = tmp_path / "configs/base.yml"
    config.write_text(BASE.replace("vocab_size: 1002", "vocab_size: 1024"))
    path = tmp_path / "train.py"
    analysis = analyzer.analyze(str(path), path.read_text(), STATED)
    assert site_named(analysis, "table").shape == (1024, 64)
    assert not [d for d in analysis.diagnostics if d.code == "SH001"]
    analyzer.workspace.set_text(str(config), BASE.replace("vocab_size: 1002", "vocab_size: 2048"))
    assert site_named(analyzer.analyze(str(path), path.read_text(), STATED), "table").shape == (2048, 64)
    analyzer.workspace.set_text(str(config), None)
    assert site_named(analyzer.analyze(str(path), path.read_text(), STATED), "table").shape == (1024, 64)


def _first_dim(tmp_path: Path, loading: str, base: str = BASE) -> object:
    program = f"""
import os, jax, jax.numpy as jnp, yaml
from pathlib import Path
from jax.sharding import NamedSharding, PartitionSpec as P
HERE = os.path.dirname(os.path.abspath(__file__))
cfg = {loading}
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((cfg["vocab_size"], 8)), NamedSharding(mesh, P("model")))
"""
    _, analysis = _analyze(tmp_path, program, base)
    return site_named(analysis, "x").shape[0]  # type: ignore[attr-defined]


def test_what_cannot_be_read_safely_stays_unknown(tmp_path: Path) -> None:
    outside = tmp_path.parent / "outside.yml"
    outside.write_text("vocab_size: 1002\n")
    unread = {
        "a relative path": 'yaml.safe_load(open("configs/base.yml"))',
        "a relative Path": 'yaml.safe_load(Path("configs/base.yml").resolve().read_text())',
        "outside the workspace": f"yaml.safe_load(open({str(outside)!r}))",
        "an unsafe loader": 'yaml.load(open(os.path.join(HERE, "configs/base.yml")), Loader=yaml.Loader)',
        "not a YAML file": 'yaml.safe_load(open(os.path.join(HERE, "train.py")))',
        "a missing file": 'yaml.safe_load(open(os.path.join(HERE, "configs/none.yml")))',
    }
    for why, loading in unread.items():
        assert isinstance(_first_dim(tmp_path, loading), SymbolicDim), why
    for why, text in {
        "two documents": "vocab_size: 1\n---\nvocab_size: 2\n",
        "a tag": "vocab_size: !!python/name:os.system\n",
    }.items():
        loading = 'yaml.safe_load(open(os.path.join(HERE, "configs/base.yml")))'
        assert isinstance(_first_dim(tmp_path, loading, text), SymbolicDim), why


def test_the_safe_loader_and_a_read_text_are_read_alike(tmp_path: Path) -> None:
    for loading in (
        'yaml.load(open(os.path.join(HERE, "configs", "base.yml")), Loader=yaml.SafeLoader)',
        'yaml.safe_load(open(os.path.join(HERE, "configs", "base.yml")).read())',
    ):
        assert _first_dim(tmp_path, loading) == 1002, loading


def test_a_yaml_string_in_the_code_keeps_its_own_origin(tmp_path: Path) -> None:
    program = """
import jax, jax.numpy as jnp, yaml
from jax.sharding import NamedSharding, PartitionSpec as P
cfg = yaml.safe_load("vocab_size: 1002")
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((cfg["vocab_size"], 8)), NamedSharding(mesh, P("model")))  # the code's own value
"""
    _, analysis = _analyze(tmp_path, program)
    (uneven,) = [d for d in analysis.diagnostics if d.code == "SH001"]
    assert uneven.severity is Severity.ERROR


LOADER = """
import os, jax, jax.numpy as jnp, yaml
from jax.sharding import NamedSharding, PartitionSpec as P

def post_process(raw):
    raw["vocab_size"] = 1024

def initialize(argv, post):
    with open(argv[1]) as f:
        raw = yaml.safe_load(f)
    for arg in argv[2:]:
        key, value = arg.split("=", 1)
        raw[key] = yaml.safe_load(value)
    if post:
        post_process(raw)
    return raw

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", "base.yml")
cfg = initialize([None, path, "emb_dim=32"], False)
changed = initialize([None, path], True)
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((cfg["vocab_size"], cfg["emb_dim"])), NamedSharding(mesh, P("model")))
y = jax.device_put(jnp.zeros((changed["vocab_size"], 8)), NamedSharding(mesh, P("model")))
"""


def test_a_loader_applies_key_value_overrides_and_a_helper_given_the_config_makes_it_unknown(
    tmp_path: Path,
) -> None:
    _, analysis = _analyze(tmp_path, LOADER)
    x = site_named(analysis, "x")
    assert x.shape == (1002, 32)  # the override is the code's own value
    assert "from base.yml: vocab_size=1002" in x.provenance[0]
    assert isinstance(site_named(analysis, "y").shape[0], SymbolicDim)  # post_process may change it


def test_merge_keys_that_disagree_and_alias_bombs_stay_unknown(tmp_path: Path) -> None:
    loading = 'yaml.safe_load(open(os.path.join(HERE, "configs", "base.yml")))["m"]'
    disagreeing = "a: &a {vocab_size: 1}\nb: &b {vocab_size: 2}\nm: {<<: [*a, *b]}\n"
    assert isinstance(_first_dim(tmp_path, loading, disagreeing), SymbolicDim)
    agreeing = "a: &a {vocab_size: 2}\nb: &b {vocab_size: 2, x: 1}\nm: {<<: [*a, *b]}\n"
    assert _first_dim(tmp_path, loading, agreeing) == 2
    bomb = "l0: &l0 {vocab_size: 8}\n" + "".join(
        f"l{i}: &l{i} {{<<: [*l{i - 1}, *l{i - 1}], k{i}: {i}}}\n" for i in range(1, 40)
    )
    # Each merge of an alias is counted: 2**39 copies would be made by flattening them.
    assert isinstance(_first_dim(tmp_path, loading.replace('["m"]', '["l39"]'), bomb), SymbolicDim)


OMEGACONF_BASE = """
mesh: {data: 2, model: 4}
model:
  vocab_size: 1000
  emb_dim: 64
  lr: 1e-3
  name: ${model.kind}
"""

OMEGACONF = """
import os, jax, jax.numpy as jnp
from omegaconf import OmegaConf
from jax.sharding import NamedSharding, PartitionSpec as P

HERE = os.path.dirname(os.path.abspath(__file__))
base = OmegaConf.load(os.path.join(HERE, "configs", "base.yml"))
cli = OmegaConf.from_cli(["model.emb_dim=32", "model.heads=6"])
cfg = OmegaConf.merge(base, cli, OmegaConf.create({"model": {"vocab_size": 1002}}))
plain = OmegaConf.to_container(cfg, resolve=True)
mesh = jax.make_mesh((cfg.mesh.data, cfg.mesh["model"]), ("data", "model"))
x = jax.device_put(jnp.zeros((cfg.model.vocab_size, cfg.model.emb_dim)), NamedSharding(mesh, P("model")))
y = jax.device_put(jnp.zeros((base.model.vocab_size, plain["model"]["heads"])), NamedSharding(mesh, P("model")))
z = jax.device_put(jnp.zeros((cfg.get("layers", 8), 4)), NamedSharding(mesh, P("model")))
lr = cfg.model.lr
name = cfg.model.name
"""


def test_omegaconf_loads_merges_and_reads_overrides_as_it_does(tmp_path: Path) -> None:
    analyzer = workspace(tmp_path, {"configs/base.yml": OMEGACONF_BASE, "train.py": OMEGACONF})
    path = tmp_path / "train.py"
    analysis = analyzer.analyze(str(path), path.read_text(), STATED)
    mesh = {m.name: m for m in analysis.meshes}["mesh"]
    assert mesh.mesh.axis_sizes == (2, 4)
    assert "mesh.model=4 from base.yml (a run may override it)" in mesh.assumed
    assert site_named(analysis, "x").shape == (1002, 32)  # merged: the later config wins
    assert site_named(analysis, "y").shape == (1000, 6)
    assert site_named(analysis, "z").shape == (8, 4)  # a key not set: get's default
    (uneven,) = [d for d in analysis.diagnostics if d.code == "SH001"]
    assert site_named(analysis, "x").span.line == uneven.span.line
    assert uneven.severity is Severity.WARNING  # the mesh's model=4 is from base.yml


def test_omegaconf_values_it_reads_otherwise_stay_unknown(tmp_path: Path) -> None:
    from shardls.analysis.library.yaml_files import text_values
    from shardls.analysis.values import Const, DictV, Unknown

    values = text_values("lr: 1e-3\nname: ${model.kind}\nsize: 4\n", None, omegaconf=True)
    assert isinstance(values, DictV)
    assert isinstance(values.get("lr"), Unknown) and isinstance(values.get("name"), Unknown)
    assert values.get("size") == Const(4)
    plain = text_values("lr: 1e-3\n", None)  # the safe loader keeps it a string
    assert isinstance(plain, DictV) and plain.get("lr") == Const("1e-3")
    assert isinstance(text_values("a: 1\na: 2\n", None, omegaconf=True), Unknown)


def test_a_notebook_has_no_file_path(tmp_path: Path) -> None:
    analyzer = workspace(tmp_path, {"configs/base.yml": BASE})
    text = textwrap.dedent(PROGRAM)
    notebook = analyzer.analyze(str(tmp_path / "train.ipynb"), text, STATED)
    assert isinstance(site_named(notebook, "table").shape[0], SymbolicDim)  # __file__: NameError there
    script = analyzer.analyze(str(tmp_path / "train.py"), text, STATED)
    assert site_named(script, "table").shape[0] == 1002
