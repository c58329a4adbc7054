"""`shardls/fileInfo`: the meshes and device count an editor's status bar shows for a document."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import MODEL, RecordingClient, initialize, open_file
from lsprotocol import types

from shardls.server.features.file_info import FILE_INFO

pytestmark = pytest.mark.asyncio

BY_DEFAULT_MESH = """\
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

y = jax.lax.with_sharding_constraint(jnp.zeros((32, 4)), P("fsdp"))
"""
"""No mesh of its own: the site uses the default-mesh setting."""


async def file_info(client: RecordingClient, uri: str) -> object:
    return as_json(await client.protocol.send_request_async(FILE_INFO, {"textDocument": {"uri": uri}}))


def as_json(value: object) -> object:
    """The answer as JSON values (pygls hands over the objects of unknown methods as namedtuples)."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {key: as_json(item) for key, item in value._asdict().items()}
    if isinstance(value, list):
        return [as_json(item) for item in value]
    return value


async def test_the_mesh_and_device_count_of_a_file(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "model.py", MODEL)

    assert await file_info(client, uri) == {
        "meshes": [
            {
                "name": "mesh",
                "axes": [{"name": "data", "size": 2}, {"name": "model", "size": 4}],
                "devices": 8,
                "source": "make_mesh at line 5",
            }
        ],
        "deviceCount": {
            "count": 8,
            "source": "default device count; set it with # shardls: device-count=N",
        },
    }


async def test_settings_apply_and_other_documents_have_none(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path, options={"deviceCount": 16, "defaultMesh": "fsdp=16"})
    uri = open_file(client, tmp_path / "step.py", BY_DEFAULT_MESH)
    notes = f"{tmp_path.as_uri()}/notes.md"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(notes, "markdown", 1, "# notes\n"))
    )

    info = await file_info(client, uri)
    other = await file_info(client, notes)

    assert info == {
        "meshes": [
            {
                "name": None,
                "axes": [{"name": "fsdp", "size": 16}],
                "devices": 16,
                "source": "default-mesh from editor settings",
            }
        ],
        "deviceCount": {"count": 16, "source": "device-count from editor settings"},
    }
    assert other is None
