"""Go to definition and find references of mesh axis names."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import MODEL, RecordingClient, initialize, open_file, position_of, word_range
from lsprotocol import types

pytestmark = pytest.mark.asyncio


async def test_definition_of_an_axis_name_is_in_the_mesh_constructor(
    client: RecordingClient, tmp_path: Path
) -> None:
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "model.py", MODEL)

    found = await client.text_document_definition_async(
        types.DefinitionParams(
            types.TextDocumentIdentifier(uri), position_of(MODEL, '"model", None', offset=3)
        )
    )

    assert found == [types.Location(uri, word_range(MODEL, '"model"'))]  # its string in make_mesh, line 4


async def test_definition_in_an_imported_file(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    config = 'import jax\n\nMESH = jax.make_mesh((2, 4), ("data", "model"))\n'
    (tmp_path / "config.py").write_text(config)
    model = MODEL.replace(
        'mesh = jax.make_mesh((2, 4), ("data", "model"))', "from config import MESH as mesh"
    )
    uri = open_file(client, tmp_path / "model.py", model)

    found = await client.text_document_definition_async(
        types.DefinitionParams(types.TextDocumentIdentifier(uri), position_of(model, '"model")', offset=2))
    )

    assert found == [types.Location((tmp_path / "config.py").as_uri(), word_range(config, '"model"'))]


async def test_references_of_an_axis_name_across_the_workspace(
    client: RecordingClient, tmp_path: Path
) -> None:
    await initialize(client, tmp_path)
    other = 'from jax.sharding import PartitionSpec as P\n\nROWS = P("model")\nNAME = "model"\n'
    (tmp_path / "other.py").write_text(other)
    uri = open_file(client, tmp_path / "model.py", MODEL)

    async def references(declarations: bool) -> list[tuple[str, int]]:
        found = await client.text_document_references_async(
            types.ReferenceParams(
                text_document=types.TextDocumentIdentifier(uri),
                position=position_of(MODEL, '"model")', offset=1),
                context=types.ReferenceContext(include_declaration=declarations),
            )
        )
        assert found is not None
        return sorted((Path(location.uri).name, location.range.start.line) for location in found)

    # Not `NAME = "model"` (not an axis there) and not the misspelt `P("modle")`.
    assert await references(True) == [("model.py", 4), ("model.py", 5), ("model.py", 6), ("other.py", 2)]
    assert await references(False) == [("model.py", 5), ("model.py", 6), ("other.py", 2)]
