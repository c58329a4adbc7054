"""A layer call's type through the real server: the hover on `y = layer(x)` says what
`jax.typeof(y)` says, with the line that put each mesh axis there (the layer's kernel for one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import RecordingClient, hover_text, initialize, open_file, position_of, published

pytestmark = pytest.mark.asyncio

EXAMPLE = """import jax
import jax.numpy as jnp
from flax import nnx
from jax.sharding import AxisType, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)
x = jax.device_put(jnp.ones((8, 16)), P("data", None))
init = nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, "model"))
layer = nnx.Linear(16, 32, kernel_init=init, rngs=nnx.Rngs(0))
y = layer(x)
"""


async def test_the_hover_on_a_layer_s_result_is_its_type(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "model.py", EXAMPLE)
    await published(client, uri, lambda p: True)
    text = await hover_text(client, uri, position_of(EXAMPLE, "y = layer"))
    assert text is not None
    assert (
        text.split("\n")[0]
        .replace("`", "")
        .startswith("float32[8@data,32@model]  →  per device float32[4,8]")
    )
    assert "**jax.typeof**: `float32[8@data,32@model]`" in text
    assert "model: Linear.kernel at line 10" in text
    assert "data: device_put at line 8" in text
