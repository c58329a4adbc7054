"""`shardls check` on a call of a placement helper (or a jitted function) of another module: the
call's layout is listed with `--show-layouts`, and the persistent cache analyses the caller again
when the helper's module changes (its result records that it read that module)."""

from __future__ import annotations

from pathlib import Path

import pytest
from check_helpers import HEADER, check, write

UTILS = (
    "import jax\n"
    "from jax.sharding import NamedSharding\n"
    "\n"
    "\n"
    "def put(x, mesh, spec):\n"
    "    return jax.device_put(x, NamedSharding(mesh, spec))\n"
)
PROJECT: dict[str, str | bytes] = {
    "pyproject.toml": "[tool.shardls]\ndevice-count = 8\n",
    "pkg/__init__.py": "",
    "pkg/utils.py": UTILS,
    "pkg/main.py": HEADER + "from pkg.utils import put\nw = put(jnp.zeros((16, 8)), mesh, P('data'))\n",
}


@pytest.fixture(autouse=True)
def _workspace(cache_workspace: None) -> None:
    """Every test here runs in its own folder (`conftest.cache_workspace`)."""


def test_show_layouts_lists_the_call_of_a_helper_with_its_layout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    write(tmp_path, PROJECT)
    out = check(capsys, "--show-layouts", "--no-cache", "--output-format", "concise").out
    assert "pkg/main.py:7:5: device_put w: float32[16@data,8] → per device float32[8,8]" in out


TRAIN_LIB = (
    "import jax\n"
    "from functools import partial\n"
    "from jax.sharding import NamedSharding, PartitionSpec\n"
    "\n"
    "mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
    "\n"
    "\n"
    "@partial(jax.jit, in_shardings=NamedSharding(mesh, PartitionSpec('data')))\n"
    "def double(x):\n"
    "    return x * 2\n"
)


@pytest.mark.parametrize(
    ("utils", "call", "edit", "after"),
    [
        pytest.param(
            UTILS,
            "from pkg.utils import put\nw = put(jnp.zeros((16, 8)), mesh, P('data'))\n",
            ("jax.device_put(x,", "jax.lax.with_sharding_constraint(x,"),
            "pkg/main.py:7:5: with_sharding_constraint w:",
            id="helper",
        ),
        pytest.param(
            TRAIN_LIB,
            "from pkg.utils import double\ny = double(jnp.zeros((16, 8)))\n",
            ("PartitionSpec('data')", "PartitionSpec('model')"),
            "pkg/main.py:7:5: jit_in_sharding x: float32[16@model,8] → per device float32[4,8]",
            id="jit",
        ),
    ],
)
def test_editing_the_helper_analyses_its_callers_again(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    analysed: list[str],
    utils: str,
    call: str,
    edit: tuple[str, str],
    after: str,
) -> None:
    write(tmp_path, {**PROJECT, "pkg/utils.py": utils, "pkg/main.py": HEADER + call})
    cold = check(capsys, "--show-layouts", "--output-format", "concise")
    analysed.clear()
    assert check(capsys, "--show-layouts", "--output-format", "concise") == cold
    assert analysed == []
    write(tmp_path, {"pkg/utils.py": utils.replace(*edit)})
    warm = check(capsys, "--show-layouts", "--output-format", "concise")
    assert sorted(analysed) == ["main.py", "utils.py"]
    assert after in warm.out
    assert warm == check(capsys, "--show-layouts", "--output-format", "concise", "--no-cache")
