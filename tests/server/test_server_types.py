"""Sharding in types through the real server: the issue's example gets its ShardingTypeError as a
diagnostic on `x @ w`, and hovers on `t` and `r` say what `jax.typeof` says; inlay hints after
intermediate arrays appear only with `typeInlayHints`."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_helpers import HANG, RecordingClient, hover_text, initialize, open_file, position_of, published
from lsprotocol import types

pytestmark = pytest.mark.asyncio

EXAMPLE = """import jax
import jax.numpy as jnp
from jax.sharding import AxisType

mesh = jax.make_mesh((2, 4), ('X', 'Y'), axis_types=(AxisType.Explicit,) * 2)
jax.set_mesh(mesh)
x = jax.device_put(jnp.ones((8, 16)), jax.P('X', 'Y'))
w = jax.device_put(jnp.ones((16, 32)), jax.P('Y', None))
y = x @ w
t = x.T
r = x.reshape(4, 2, 16)
"""


async def test_the_contraction_error_and_the_types_reach_the_editor(
    client: RecordingClient, tmp_path: Path
) -> None:
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "model.py", EXAMPLE)

    params = await published(client, uri, lambda p: bool(p.diagnostics))
    (diagnostic,) = params.diagnostics
    assert diagnostic.code == "SH301" and diagnostic.severity == types.DiagnosticSeverity.Error
    assert diagnostic.range == types.Range(types.Position(8, 4), types.Position(8, 9))
    assert "Contracting dimensions are sharded and it is ambiguous" in diagnostic.message

    transposed = await hover_text(client, uri, position_of(EXAMPLE, "t = x.T"))
    reshaped = await hover_text(client, uri, position_of(EXAMPLE, "r = x"))
    assert transposed is not None and reshaped is not None
    assert (
        transposed.split("\n")[0].replace("`", "").rstrip() == "float32[16@Y,8@X]  →  per device float32[4,4]"
    )
    assert "**jax.typeof**: `float32[16@Y,8@X]`" in transposed
    assert "Y: device_put at line 7" in transposed
    assert reshaped.split("\n")[0].replace("`", "").startswith("float32[4@X,2,16@Y]")
    operand = await hover_text(client, uri, position_of(EXAMPLE, "x @ w"))
    assert operand is not None and "**jax.typeof**: `float32[8@X,16@Y]`" in operand


async def test_type_inlay_hints_are_off_until_asked_for(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path, options={"inlayHints": True})
    uri = open_file(client, tmp_path / "model.py", EXAMPLE)
    await published(client, uri, lambda p: bool(p.diagnostics))
    whole = types.Range(types.Position(0, 0), types.Position(12, 0))

    async def hinted_lines() -> set[int]:
        hints = await client.text_document_inlay_hint_async(
            types.InlayHintParams(types.TextDocumentIdentifier(uri), whole)
        )
        return {hint.position.line for hint in hints or []}

    assert await hinted_lines() == {6, 7}  # the two device_puts
    refreshes = client.inlay_hint_refreshes
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams({"shardls": {"inlayHints": True, "typeInlayHints": True}})
    )
    deadline = asyncio.get_running_loop().time() + HANG
    while client.inlay_hint_refreshes == refreshes and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)
    assert await hinted_lines() == {6, 7, 9, 10}  # and after `t = x.T`, `r = x.reshape(...)`
