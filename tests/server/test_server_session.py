"""The session around the features: settings from every source, notebooks, and a failing
handler that leaves the server serving."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import (
    MODEL,
    RecordingClient,
    codes,
    hover_text,
    initialize,
    open_file,
    position_of,
    published,
)
from lsprotocol import types

pytestmark = pytest.mark.asyncio

BY_DEVICE_COUNT = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((jax.device_count(),), ("dev",))
x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("dev")))
"""
"""Fine on 8 devices; SH001 on 16 (8 rows over 16 devices)."""


async def test_settings_from_config_file_editor_and_configuration_requests(
    client: RecordingClient, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.shardls]\ndevice-count = 16\n")
    await initialize(client, tmp_path, options={"inlayHints": True})
    uri = open_file(client, tmp_path / "model.py", BY_DEVICE_COUNT)
    from_file = await published(client, uri, lambda p: bool(p.diagnostics))
    assert codes(from_file.diagnostics) == ["SH001"]

    # Editor settings override the file; sent with the notification...
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams({"shardls": {"deviceCount": 8}})
    )
    await published(client, uri, lambda p: not p.diagnostics)
    hover = await hover_text(client, uri, position_of(BY_DEVICE_COUNT, "jax.make_mesh"))
    assert hover is not None and "dev=8 (8 devices" in hover

    # ... or answered when the server asks (workspace/configuration).
    client.set_configuration({"deviceCount": 16, "ignore": ["SH1"], "inlayHints": False}, section="shardls")
    refreshes = client.inlay_hint_refreshes
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(None))
    again = await published(client, uri, lambda p: bool(p.diagnostics))
    assert codes(again.diagnostics) == ["SH001"]
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(6, 0))
        )
    )
    assert hints is not None and not hints
    assert client.inlay_hint_refreshes > refreshes


BARE_SPEC = """\
import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P


@jax.jit
def f(a):
    return jax.lax.with_sharding_constraint(a, P(None, "model"))


f(jnp.zeros((8, 16)))
"""
"""No mesh in the file: the editor's default mesh lays the constraint out."""


async def test_a_bad_setting_is_reported_and_the_others_apply(
    client: RecordingClient, tmp_path: Path
) -> None:
    options = {"deviceCount": "many", "defaultMesh": "data=2,model=4", "select": ["SH0"], "ignore": ["SH001"]}
    await initialize(client, tmp_path, options=options)
    model_uri = open_file(client, tmp_path / "model.py", MODEL)
    bare_uri = open_file(client, tmp_path / "bare.py", BARE_SPEC)

    model = await published(client, model_uri, lambda p: bool(p.diagnostics))
    bare = await published(client, bare_uri)
    hover = await hover_text(client, bare_uri, position_of(BARE_SPEC, "P(None"))

    assert codes(model.diagnostics) == ["SH005"]
    assert not bare.diagnostics  # SH202 is not selected
    assert hover is not None and hover.startswith("`float32[8,16@model]`  →  per device `float32[8,4]`")
    assert "default-mesh from editor settings" in hover
    assert [m.message for m in client.messages] == [
        "shardls: editor settings: deviceCount: expected a positive integer, got 'many'"
    ]


@pytest.mark.parametrize("indent", ["", "  "], ids=["flush", "indented-cell"])
async def test_a_notebooks_cells_are_analysed_together(
    client: RecordingClient, tmp_path: Path, indent: str
) -> None:
    """Also with the last cell indented as a whole, which IPython runs dedented."""
    await initialize(client, tmp_path)
    notebook = (tmp_path / "explore.ipynb").as_uri()
    cells = [
        "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n%matplotlib inline",
        "# markdown cells do not count",
        'mesh = jax.make_mesh((2, 4), ("data", "model"))',
        f'{indent}x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P(None, "model")))\n'
        f'{indent}typo = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P("modle")))',
    ]
    uris = [f"vscode-notebook-cell:{tmp_path}/explore.ipynb#cell{n}" for n in range(len(cells))]
    kinds = [
        types.NotebookCellKind.Code,
        types.NotebookCellKind.Markup,
        types.NotebookCellKind.Code,
        types.NotebookCellKind.Code,
    ]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            types.NotebookDocument(
                notebook,
                "jupyter-notebook",
                1,
                [types.NotebookCell(kind, uri) for kind, uri in zip(kinds, uris)],
            ),
            [
                types.TextDocumentItem(
                    uri, "python" if kind == types.NotebookCellKind.Code else "markdown", 1, text
                )
                for uri, kind, text in zip(uris, kinds, cells)
            ],
        )
    )

    last = await published(client, uris[3], lambda p: bool(p.diagnostics))
    first = await published(client, uris[0])

    assert codes(last.diagnostics) == ["SH005"]
    assert last.diagnostics[0].range.start == position_of(cells[3], '"modle"')  # line 1 of the cell
    assert last.diagnostics[0].related_information is not None
    assert last.diagnostics[0].related_information[0].location.uri == uris[2]  # the mesh, in cell 3
    assert not first.diagnostics
    hover = await hover_text(client, uris[3], position_of(cells[3], "P(None"))
    assert hover is not None and hover.startswith("`float32[8,16@model]`  →  per device `float32[8,4]`")


async def test_a_failing_handler_is_logged_and_the_server_keeps_serving(
    failing_client: RecordingClient, tmp_path: Path
) -> None:
    await initialize(failing_client, tmp_path)
    uri = open_file(failing_client, tmp_path / "model.py", MODEL)

    hover = await hover_text(failing_client, uri, position_of(MODEL, "P(None"))
    params = await published(failing_client, uri, lambda p: bool(p.diagnostics))
    hints = await failing_client.text_document_inlay_hint_async(
        types.InlayHintParams(
            types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(8, 0))
        )
    )

    assert hover is None
    errors = [m.message for m in failing_client.log_messages if m.type == types.MessageType.Error]
    assert len(errors) == 1 and errors[0].startswith("shardls: textDocument/hover failed: ")
    assert "Traceback" in errors[0]
    assert codes(params.diagnostics) == ["SH001", "SH005"]
    assert hints is not None and len(hints) == 1
