"""A call of a placement helper (or a jitted function) of another module, in the editor: a hover
on the call shows the layout its arguments make there, and editing the helper republishes its
callers."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import (
    RecordingClient,
    codes,
    hover_text,
    initialize,
    open_file,
    position_of,
    published,
    replace_all,
)

pytestmark = pytest.mark.asyncio

UTILS = (
    "import jax\n"
    "from jax.sharding import NamedSharding, PartitionSpec\n"
    "\n"
    "\n"
    "def put(x, mesh, names):\n"
    "    return jax.device_put(x, NamedSharding(mesh, PartitionSpec(*names)))\n"
)
MAIN = (
    "import jax\n"
    "import jax.numpy as jnp\n"
    "from utils import put\n"
    "\n"
    'mesh = jax.make_mesh((2, 4), ("data", "model"))\n'
    'rows = put(jnp.zeros((6, 8)), mesh, ("data",))\n'
)


async def test_hover_on_the_call_of_a_helper_shows_its_layout(
    client: RecordingClient, tmp_path: Path
) -> None:
    await initialize(client, tmp_path)
    (tmp_path / "utils.py").write_text(UTILS)
    uri = open_file(client, tmp_path / "main.py", MAIN, write=True)

    text = await hover_text(client, uri, position_of(MAIN, "put(jnp"))

    assert text is not None
    assert text.split("\n")[0].replace("`", "").rstrip() == "float32[6@data,8]  →  per device float32[3,8]"
    assert "via put() in utils.py:5" in text


async def test_editing_the_helper_republishes_its_callers(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    utils_uri = open_file(client, tmp_path / "utils.py", UTILS, write=True)
    main_uri = open_file(client, tmp_path / "main.py", MAIN, write=True)
    await published(client, main_uri, lambda p: not p.diagnostics)

    replace_all(client, utils_uri, 2, UTILS.replace("PartitionSpec(*names)", 'PartitionSpec("model")'))
    params = await published(client, main_uri, lambda p: bool(p.diagnostics))

    assert codes(params.diagnostics) == ["SH001"]
    assert params.diagnostics[0].range.start.line == 5  # on the call


TRAIN = "import jax.numpy as jnp\nfrom train_lib import double\n\ny = double(jnp.zeros((6, 8)))\n"
DOUBLING = (
    "import jax\n"
    "from functools import partial\n"
    "from jax.sharding import NamedSharding, PartitionSpec\n"
    "\n"
    'mesh = jax.make_mesh((2, 4), ("data", "model"))\n'
    "\n"
    "\n"
    '@partial(jax.jit, in_shardings=NamedSharding(mesh, PartitionSpec("data")))\n'
    "def double(x):\n"
    "    return x * 2\n"
)


async def test_hover_on_the_call_of_a_function_jitted_in_another_module_shows_its_input_layout(
    client: RecordingClient, tmp_path: Path
) -> None:
    await initialize(client, tmp_path)
    (tmp_path / "train_lib.py").write_text(DOUBLING)
    uri = open_file(client, tmp_path / "train.py", TRAIN, write=True)

    text = await hover_text(client, uri, position_of(TRAIN, "jnp.zeros((6"))

    assert text is not None
    assert text.split("\n")[0].replace("`", "").rstrip() == "float32[6@data,8]  →  per device float32[3,8]"
    assert "via double() in train_lib.py:8" in text


async def test_editing_the_jitted_functions_module_republishes_its_callers(
    client: RecordingClient, tmp_path: Path
) -> None:
    await initialize(client, tmp_path)
    lib_uri = open_file(client, tmp_path / "train_lib.py", DOUBLING, write=True)
    train_uri = open_file(client, tmp_path / "train.py", TRAIN, write=True)
    await published(client, train_uri, lambda p: not p.diagnostics)

    replace_all(client, lib_uri, 2, DOUBLING.replace('PartitionSpec("data")', 'PartitionSpec("model")'))
    params = await published(client, train_uri, lambda p: bool(p.diagnostics))

    assert codes(params.diagnostics) == ["SH001"]
    assert params.diagnostics[0].range.start.line == 3  # on the call
