"""`[tool.shardls]` / shardls.toml: reading, finding, errors, and precedence
(pragma > command-line flag > configuration file > default)."""

from __future__ import annotations

from pathlib import Path

import pytest
from check_helpers import BAD, TYPO, check, check_json, write

from shardls.config import (
    ConfigError,
    SettingsLayer,
    config_for,
    find_config,
    load_config,
    merge_settings,
    parse_bytes,
)
from shardls.core import AxisType, Mesh

FILL_MESH = (
    "import jax\n"
    "import jax.numpy as jnp\n"
    "from jax.sharding import NamedSharding, PartitionSpec as P\n"
    "\n"
    "mesh = jax.make_mesh((-1,), ('data',))\n"
    "x = jax.device_put(jnp.zeros((16, 4)), NamedSharding(mesh, P('data')))\n"
)
"""A mesh of every device: x's shard is 16/N rows, so the layout shows the device count N."""

NO_MESH = (
    "import jax.numpy as jnp\n"
    "from jax.sharding import PartitionSpec as P\n"
    "\n"
    "x = jnp.zeros((16, 4), out_sharding=P('data'))\n"
)
"""No mesh in the file: the layout uses the assumed mesh, so it shows which one won."""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _layout(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    code, out = check_json(capsys, "--show-layouts", *argv)
    assert code in (0, 1), out
    (layout,) = out["layouts"]
    return layout  # type: ignore[no-any-return]


# -- reading -----------------------------------------------------------------------------------


def test_every_key(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n\n[tool.shardls]\n"
            "device-count = 16\n"
            "default-mesh = 'data=2,model=4'\n"
            "axis-types = ['explicit', 'auto']\n"
            "select = ['SH0', 'sh104']\n"
            "ignore = ['SH007']\n"
            "exclude = ['build/', '*_pb2.py']\n"
            "dtype = 'float64'\n"
            "hbm-per-device = '16GiB'\n"
            "x64 = true\n"
        },
    )
    config = load_config(tmp_path / "pyproject.toml")
    assert config.exclude == ("build/", "*_pb2.py")
    assert config.root == tmp_path
    layer = config.layer
    assert layer == SettingsLayer(
        "pyproject.toml",
        device_count=16,
        default_mesh=Mesh(("data", "model"), (2, 4), (AxisType.EXPLICIT, AxisType.AUTO)),
        select=frozenset({"SH0", "SH104"}),
        ignore=frozenset({"SH007"}),
        dtype="float64",
        x64=True,
        hbm_per_device=16 * 2**30,
    )
    settings = merge_settings(layer)
    assert settings.dtype is not None and settings.dtype.name == "float64"  # x64 keeps it wide
    assert (settings.device_count, settings.device_count_source) == (16, "device-count from pyproject.toml")


def test_shardls_toml_and_mesh_table(tmp_path: Path) -> None:
    write(tmp_path, {"shardls.toml": "[default-mesh]\ndata = 2\nmodel = '4:explicit'\n"})
    mesh = load_config(tmp_path / "shardls.toml").layer.default_mesh
    assert mesh == Mesh(("data", "model"), (2, 4), (AxisType.AUTO, AxisType.EXPLICIT))


def test_x64_off_narrows_the_default_dtype() -> None:
    settings = merge_settings(SettingsLayer("a", dtype="float64"))
    assert settings.dtype is not None and settings.dtype.name == "float32"
    wide = merge_settings(SettingsLayer("a", dtype="float64"), SettingsLayer("b", x64=True))
    assert wide.dtype is not None and wide.dtype.name == "float64"


@pytest.mark.parametrize(
    ("text", "count"),
    [("16GiB", 16 * 2**30), ("80 GB", 80 * 10**9), ("1.5MiB", 3 * 2**19), ("512", 512), ("2kb", 2000)],
)
def test_parse_bytes(text: str, count: int) -> None:
    assert parse_bytes(text) == count


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("device-count = 'eight'", "[tool.shardls] device-count: expected a positive integer, got 'eight'"),
        ("device-count = 0", "device-count: expected a positive integer, got 0"),
        ("device-count = true", "device-count: expected a positive integer, got True"),
        ("devices = 8", "[tool.shardls] devices: unknown key; the keys are device-count, default-mesh"),
        ("default-mesh = 'data'", "default-mesh: expected name=size"),
        ("default-mesh = 'data=2:implicit'", "default-mesh: unknown axis type 'implicit'"),
        ("default-mesh = {data = [2]}", "default-mesh: the size of mesh axis 'data' must be an integer"),
        ("default-mesh = 8", "default-mesh: expected text such as 'data=2,model=4'"),
        ("axis-types = 'explicit'", "axis-types: only applies to default-mesh, which is not set"),
        (
            "default-mesh = 'a=2,b=2'\naxis-types = ['auto', 'auto', 'auto']",
            "axis-types: gives 3 types for the 2 mesh axes a, b",
        ),
        ("select = 3", "select: expected a list of rule codes"),
        ("ignore = ['SH999']", "ignore: 'SH999' is not a rule code or a prefix of one"),
        ("exclude = 'build'", "exclude: expected a list of glob patterns"),
        ("dtype = 'floaty'", "dtype: unknown dtype 'floaty'"),
        ("hbm-per-device = '16 parsecs'", "hbm-per-device: expected a size such as '16GiB'"),
        ("x64 = 'yes'", "x64: expected true or false, got 'yes'"),
        ("device-count = ", "pyproject.toml: not valid TOML"),
    ],
)
def test_bad_config_is_one_line_naming_file_and_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, body: str, message: str
) -> None:
    write(tmp_path, {"pyproject.toml": f"[tool.shardls]\n{body}\n", "bad.py": BAD})
    with pytest.raises(ConfigError, match="^pyproject.toml: ") as raised:
        config_for(tmp_path)
    assert message in str(raised.value)
    result = check(capsys)
    assert (result.code, result.out) == (2, "")
    assert result.err == f"shardls check: error: {raised.value}\n"


def test_shardls_toml_errors_name_the_key_without_a_table(tmp_path: Path) -> None:
    write(tmp_path, {"shardls.toml": "device-count = -1\n"})
    with pytest.raises(ConfigError, match=r"^shardls.toml: device-count: expected a positive integer"):
        config_for(tmp_path)


# -- finding -----------------------------------------------------------------------------------


def test_nearest_configuration_upward(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": "[tool.shardls]\ndevice-count = 4\n",
            "pkg/pyproject.toml": "[project]\nname = 'pkg'\n",  # no [tool.shardls]: not a config
            "pkg/mod.py": "",
            "other/shardls.toml": "device-count = 2\n",
            "other/pyproject.toml": "[tool.shardls]\ndevice-count = 16\n",
            "broken/pyproject.toml": "this is [not toml",  # unrelated and broken: never parsed
            "broken/mod.py": "",
        },
    )
    assert find_config(tmp_path / "pkg" / "mod.py") == tmp_path / "pyproject.toml"
    assert find_config(tmp_path / "other") == tmp_path / "other" / "shardls.toml"
    assert config_for(tmp_path / "broken" / "mod.py").layer.device_count == 4


def test_explicit_config_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(tmp_path, {"ci.toml": "ignore = ['SH005']\n", "typo.py": TYPO})
    assert check(capsys, "typo.py").code == 1
    assert check(capsys, "--config", "ci.toml", "typo.py").code == 0


def test_each_path_uses_its_own_configuration(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(
        tmp_path,
        {"a/shardls.toml": "ignore = ['SH001']\n", "a/bad.py": BAD, "b/bad.py": BAD},
    )
    code, out = check_json(capsys, "a", "b")
    assert [d["path"] for d in out["diagnostics"]] == ["b/bad.py"]


# -- precedence --------------------------------------------------------------------------------


def test_device_count_precedence(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(tmp_path, {"m.py": FILL_MESH})
    assert _layout(capsys)["shard_shape"] == [2, 4]  # default: 8 devices
    write(tmp_path, {"pyproject.toml": "[tool.shardls]\ndevice-count = 4\n"})
    assert _layout(capsys)["shard_shape"] == [4, 4]  # the file
    assert _layout(capsys, "--device-count", "2")["shard_shape"] == [8, 4]  # the flag over the file
    write(tmp_path, {"m.py": "# shardls: device-count=16\n" + FILL_MESH})
    layout = _layout(capsys, "--device-count", "2")
    assert layout["shard_shape"] == [1, 4]  # the pragma over both
    assert layout["assumptions"] == ["size of data filled from 16 devices (pragma at line 1)"]


def test_device_count_source_is_named(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(tmp_path, {"m.py": FILL_MESH, "pyproject.toml": "[tool.shardls]\ndevice-count = 4\n"})
    assert _layout(capsys)["assumptions"] == [
        "size of data filled from 4 devices (device-count from pyproject.toml)"
    ]
    assert _layout(capsys, "--device-count", "2")["assumptions"] == [
        "size of data filled from 2 devices (device-count from the command line)"
    ]


def test_mesh_precedence(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(tmp_path, {"m.py": NO_MESH})
    assert _layout(capsys)["mesh"] is None
    write(tmp_path, {"shardls.toml": "default-mesh = 'data=2'\naxis-types = 'explicit'\n"})
    assert _layout(capsys)["mesh"] == {"data": 2}
    flagged = _layout(capsys, "--mesh", "data=4:explicit")
    assert (flagged["mesh"], flagged["shard_shape"]) == ({"data": 4}, [4, 4])
    write(tmp_path, {"m.py": "# shardls: mesh data=8:explicit\n" + NO_MESH})
    assert _layout(capsys, "--mesh", "data=4:explicit")["mesh"] == {"data": 8}


def test_rule_selection_precedence(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    write(tmp_path, {"typo.py": TYPO, "bad.py": BAD, "shardls.toml": "ignore = ['SH005']\n"})

    def codes(*argv: str) -> list[str]:
        return [d["code"] for d in check_json(capsys, *argv)[1]["diagnostics"]]

    assert codes() == ["SH001"]
    assert codes("--ignore", "SH001") == ["SH005"]  # the flag replaces the file's list
    assert codes("--select", "SH001,SH005", "--ignore", "SH1") == ["SH001", "SH005"]
    write(tmp_path, {"bad.py": BAD.rstrip("\n") + "  # shardls: ignore[SH001]\n"})
    assert codes("--select", "SH001") == []  # the pragma suppresses what the flags select
