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


TRAIN = "import jax.numpy as jnp\nfrom utils import double\n\ny = double(jnp.zeros((6, 8)))\n"
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
CASES = [
    # the helper's module, the caller, where the hover is, the note, the edit that breaks the call
    pytest.param(
        UTILS,
        MAIN,
        "put(jnp",
        "via put() in utils.py:5",
        ("PartitionSpec(*names)", 'PartitionSpec("model")'),
        id="helper",
    ),
    pytest.param(
        DOUBLING,
        TRAIN,
        "jnp.zeros((6",
        "via double() in utils.py:8",
        ('PartitionSpec("data")', 'PartitionSpec("model")'),
        id="jit",
    ),
]


@pytest.mark.parametrize(("utils", "main", "hovered", "note", "edit"), CASES)
async def test_hover_on_the_call_shows_its_layout_and_editing_the_helper_republishes_it(
    client: RecordingClient,
    tmp_path: Path,
    utils: str,
    main: str,
    hovered: str,
    note: str,
    edit: tuple[str, str],
) -> None:
    await initialize(client, tmp_path)
    utils_uri = open_file(client, tmp_path / "utils.py", utils, write=True)
    main_uri = open_file(client, tmp_path / "main.py", main, write=True)
    await published(client, main_uri, lambda p: not p.diagnostics)

    text = await hover_text(client, main_uri, position_of(main, hovered))

    assert text is not None
    assert text.split("\n")[0].replace("`", "").rstrip() == "float32[6@data,8]  →  per device float32[3,8]"
    assert note in text

    replace_all(client, utils_uri, 2, utils.replace(*edit))
    params = await published(client, main_uri, lambda p: bool(p.diagnostics))

    assert codes(params.diagnostics) == ["SH001"]
    assert params.diagnostics[0].range.start.line == main.count("\n") - 1  # on the call
