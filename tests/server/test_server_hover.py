"""Hovers on a spec, a call, a mesh constructor and an axis name, against the real server."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import MODEL, RecordingClient, hover_text, initialize, open_file, position_of

pytestmark = pytest.mark.asyncio


async def test_hover_on_a_spec_shows_the_layout(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "model.py", MODEL)

    text = await hover_text(client, uri, position_of(MODEL, 'P(None, "model")'))

    assert text is not None
    lines = text.split("\n")
    assert lines[0].replace("`", "").rstrip() == "float32[8,16@model]  →  per device float32[8,4]"
    assert "4 distinct shards × 2 copies" in text
    assert "128 bytes per device, 1.0 KiB (1,024 bytes) over all 8 devices" in text
    assert "**mesh**: `data=2, model=4 (8 devices, Explicit axes)`" in text
    assert "make_mesh at line 5" in text
    # The device grid of the 2×4 mesh: one table, one cell per distinct shard with its devices.
    assert text.count("┌") == 1
    assert "│ 0:4      │ 4:8      │ 8:12     │ 12:16    │" in text
    assert "│ dev 0, 4 │ dev 1, 5 │ dev 2, 6 │ dev 3, 7 │" in text


async def test_the_first_lines_of_a_hover_are_what_a_user_needs_most(
    client: RecordingClient, tmp_path: Path
) -> None:
    """Per-device shape, shards × copies, bytes, then problems; the mesh, spec, grid and where
    the numbers come from after them."""
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "model.py", MODEL)

    good = await hover_text(client, uri, position_of(MODEL, 'P(None, "model")'))
    bad = await hover_text(client, uri, position_of(MODEL, "jax.device_put", line=6))

    assert good is not None and bad is not None
    assert [line.rstrip() for line in good.split("\n")[:3]] == [
        "`float32[8,16@model]`  →  per device `float32[8,4]`",
        "4 distinct shards × 2 copies",
        "128 bytes per device, 1.0 KiB (1,024 bytes) over all 8 devices",
    ]
    order = [good.index(text) for text in ("**mesh**", "**spec**", "```text", "**where the numbers")]
    assert order == sorted(order)
    assert bad.index("**problems**") < bad.index("**mesh**") < bad.index("**where the numbers")


async def test_hover_reports_the_problem_at_the_place(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "model.py", MODEL)

    text = await hover_text(client, uri, position_of(MODEL, "jax.device_put", line=6))

    assert text is not None
    assert text.startswith("`float32[50257@model,16]`  →  rejected by JAX (SH001)")
    assert "error SH001 indivisible-dimension: dimension 0 of [50257, 16] has size 50257" in text


async def test_hover_on_a_mesh_and_on_an_axis_name(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "model.py", MODEL)

    mesh = await hover_text(client, uri, position_of(MODEL, "jax.make_mesh", offset=4))
    axis = await hover_text(client, uri, position_of(MODEL, '"model"', line=5, offset=2))
    nothing = await hover_text(client, uri, position_of(MODEL, "import jax"))

    assert mesh is not None and mesh.startswith("**mesh**: `data=2, model=4 (8 devices, Explicit axes)`")
    assert "make_mesh at line 5" in mesh
    assert axis is not None and axis.startswith("mesh axis `model`: size 4 of 8 devices, Explicit")
    assert nothing is None


LAYERS = """\
import jax
import jax.numpy as jnp
from flax import nnx

mesh = jax.make_mesh((2, 4), ("data", "model"))
with jax.set_mesh(mesh):
    layer = nnx.Linear(
        16,
        32,
        kernel_init=nnx.with_partitioning(nnx.initializers.lecun_normal(), (None, "model")),
        bias_init=nnx.with_partitioning(nnx.initializers.zeros_init(), ("model",)),
        rngs=nnx.Rngs(0),
    )
    scale = nnx.Param(jnp.ones((8, 16)), out_sharding=("data", None))
"""


async def test_hover_on_a_layer_call_and_a_param(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "layers.py", LAYERS)

    table = await hover_text(client, uri, position_of(LAYERS, "nnx.Linear", offset=5))
    param = await hover_text(client, uri, position_of(LAYERS, "nnx.Param", offset=5))

    assert table is not None
    assert table.split("\n") == [
        "2 parameters, 544 B per device",
        "",
        "| parameter | global | spec | per device | bytes/device |",
        "| --- | --- | --- | --- | --- |",
        "| `layer.bias` | `float32[32@model]` | `P('model')` | `float32[8]` | 32 B |",
        "| `layer.kernel` | `float32[16,32@model]` | `P(None, 'model')` | `float32[16,8]` | 512 B |",
    ]
    assert param is not None and param.startswith("`float32[8@data,16]`  →  per device `float32[4,16]`")


SHARDINGS = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ("data", "model"))
sharding = NamedSharding(mesh, P("data"))
losses = jax.device_put(jnp.ones((8, 16)), sharding)
masks = jax.device_put(jnp.zeros((8, 16)), sharding)
both = NamedSharding(mesh, P(None, "model"))
inputs = jax.device_put(jnp.ones((2, 8)), both)
labels = jax.device_put(jnp.ones((2, 4)), both)
"""


async def test_hover_on_a_named_sharding_lists_the_arrays_it_meets(
    client: RecordingClient, tmp_path: Path
) -> None:
    """A NamedSharding built on its own: the layout its uses agree on, and each array it meets;
    when they differ, no shape of its own, and the list."""
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "train.py", SHARDINGS)

    agreed = await hover_text(client, uri, position_of(SHARDINGS, 'P("data")', offset=2))
    call = await hover_text(client, uri, position_of(SHARDINGS, "NamedSharding(mesh", line=5, offset=3))
    differ = await hover_text(client, uri, position_of(SHARDINGS, 'P(None, "model")', offset=2))

    assert agreed is not None and call == agreed
    assert agreed.startswith("`float32[8@data,16]`  →  per device `float32[4,16]`")
    assert "**meets (2 uses in this file)**:" in agreed
    assert "- `losses` at line 7 (device_put): `float32[8@data,16]` → per device `float32[4,16]`" in agreed
    assert "- `masks` at line 8 (device_put): `float32[8@data,16]` → per device `float32[4,16]`" in agreed
    assert differ is not None
    assert differ.startswith('`P(None, "model")`  (the array\'s shape is not known here: rank ≥ 2)')
    assert "- `inputs` at line 10 (device_put): `float32[2,8@model]` → per device `float32[2,2]`" in differ
    assert "- `labels` at line 11 (device_put): `float32[2,4@model]` → per device `float32[2,1]`" in differ
    assert "the uses have different shapes" in differ
