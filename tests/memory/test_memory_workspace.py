"""A model class sized by its instantiation in another file of the workspace (the training script
that imports it), laid out on that file's mesh; through `file_models` and `shardls report`."""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_helpers import run

from shardls.analysis.settings import Settings
from shardls.analysis.workspace import Workspace
from shardls.memory.discover import file_models

MODEL = """\
from dataclasses import dataclass

from flax import nnx

wp = nnx.with_partitioning


@dataclass
class Config:
    d_model: int = 64
    d_ff: int = 256
    n_layers: int = 2

    @classmethod
    def big(cls):
        return cls(d_model=4096, d_ff=16384, n_layers=32)


class Block(nnx.Module):
    def __init__(self, cfg: Config, *, rngs: nnx.Rngs):
        init = nnx.initializers.zeros_init()
        self.up = nnx.Linear(cfg.d_model, cfg.d_ff, use_bias=False, kernel_init=wp(init, ("fsdp", None)), rngs=rngs)


class Net(nnx.Module):
    def __init__(self, cfg: Config, *, rngs: nnx.Rngs):
        self.layers = nnx.List([Block(cfg, rngs=rngs) for _ in range(cfg.n_layers)])
"""

TRAIN = """\
import jax
from flax import nnx

from pkg.model import Config, Net

mesh = jax.make_mesh((8,), ("fsdp",))

with jax.set_mesh(mesh):
    net = Net(Config.big(), rngs=nnx.Rngs(0))
"""
"""32 layers of 4096 x 16384 float32: 2.1 B parameters, 8 GiB, 1 GiB per device over fsdp=8."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(MODEL)
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "unrelated.py").write_text("def Net(x):\n    return x\n\n\nNet(3)\n")
    return tmp_path


def test_class_is_sized_by_the_script_that_instantiates_it(project: Path) -> None:
    model_file = project / "pkg" / "model.py"
    models = file_models(Workspace([project]), str(model_file), MODEL, Settings()).models

    net = next(m for m in models if m.name == "Net")
    assert (net.param_count, net.total_bytes, net.max_bytes_per_device) == (
        32 * 4096 * 16384,
        32 * 4096 * 16384 * 4,
        32 * 4096 * 16384 * 4 // 8,
    )
    assert net.mesh_text == "fsdp=8"
    assert net.assumptions[0] == "sizes from the instantiation at ../train.py:9"
    assert (net.path, net.line, net.instantiation) == (str(model_file), 24, False)
    # Block is only built inside Net: sized through Net's call, with Net's arguments.
    block = next(m for m in models if m.name == "Block")
    assert block.param_count == 4096 * 16384
    assert block.assumptions[0] == "sizes from Net's instantiation at ../train.py:9"
    assert block.max_bytes_per_device == 4096 * 16384 * 4 // 8
    assert not any(m.instantiation for m in models)  # the script's model belongs to the script


def test_without_an_instantiation_a_config_parameter_takes_the_config_defaults(tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    models = file_models(Workspace([tmp_path]), str(path), MODEL, Settings()).models
    net = next(m for m in models if m.name == "Net")
    assert net.param_count == 2 * 64 * 256
    assert net.assumptions[:2] == (
        "no instantiation in this file: sizes from parameter defaults",
        "cfg is Config() (the config class's defaults)",
    )


def test_a_config_without_defaults_leaves_the_sizes_symbolic(tmp_path: Path) -> None:
    text = MODEL.replace("d_model: int = 64", "d_model: int")
    models = file_models(Workspace([tmp_path]), str(tmp_path / "model.py"), text, Settings()).models
    net = next(m for m in models if m.name == "Net")
    assert net.param_count == 0
    assert not any("Config()" in note for note in net.assumptions)
    # Each unknown size is named after what the code reads (`cfg.d_model`), not after its config.
    assert "layers[*].up.kernel: dimensions d_model, d_ff are symbolic; not counted" in net.assumptions


def test_report_of_the_model_file_uses_the_script(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text("[tool.shardls]\n")
    result = run(capsys, "report", str(project / "pkg" / "model.py::Net"), "--output-format", "json")
    assert result.code == 0
    assert '"param_count": 2147483648' in result.out
    assert "sizes from the instantiation at ../train.py:9" in result.out


def test_a_call_that_gives_every_size_wins_and_scripts_come_before_tests(project: Path) -> None:
    """train.py reads its config at run time; the test builds a small one from literals."""
    (project / "train.py").write_text(
        "import sys\nfrom flax import nnx\n\nfrom pkg.model import Net\n\n"
        "net = Net(load_config(sys.argv[1]), rngs=nnx.Rngs(0))\n"
    )
    tests = project / "tests"
    tests.mkdir()
    (tests / "test_net.py").write_text(
        "from flax import nnx\n\nfrom pkg.model import Config, Net\n\n\n"
        "def test_net():\n    Net(Config(d_model=8, d_ff=16, n_layers=3), rngs=nnx.Rngs(0))\n"
    )
    model_file = project / "pkg" / "model.py"

    def net() -> tuple[int, str]:
        models = file_models(Workspace([project]), str(model_file), MODEL, Settings()).models
        found = next(m for m in models if m.name == "Net")
        return found.param_count, found.assumptions[0]

    assert net() == (3 * 8 * 16, "sizes from the instantiation at ../tests/test_net.py:7")
    (project / "zz_script.py").write_text(
        TRAIN.replace("Config.big()", "Config(d_model=8, d_ff=16, n_layers=5)")
    )
    assert net() == (5 * 8 * 16, "sizes from the instantiation at ../zz_script.py:9")


def test_a_script_reports_the_models_it_builds_from_imported_classes(project: Path) -> None:
    train = project / "train.py"
    (net,) = file_models(Workspace([project]), str(train), TRAIN, Settings()).models
    assert (net.name, net.class_name, net.instantiation, net.line) == ("net", "Net", True, 8)
    assert (net.param_count, net.mesh_text) == (32 * 4096 * 16384, "fsdp=8")


def test_without_a_config_file_the_project_root_is_the_workspace(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`from pkg.model import Net` in train.py resolves only from the project's root, which a
    setup.py (or pyproject.toml, .git) marks when no configuration file does."""
    (project / "setup.py").write_text("")
    result = run(capsys, "report", str(project / "pkg" / "model.py::Net"), "--output-format", "json")
    assert '"param_count": 2147483648' in result.out
