"""Model memory in the editor: code lenses with the totals, the command that shows the table, the
class-name hover, and SH213 when a configured `hbm-per-device` is exceeded."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import RecordingClient, hover_text, initialize, open_file, position_of, published
from lsprotocol import types

from shardls.server.features.code_lens import SHOW_MODEL

pytestmark = pytest.mark.asyncio

MODELS = """\
import jax
from flax import nnx

mesh = jax.make_mesh((8,), ("fsdp",))
wp = nnx.with_partitioning


class MLP(nnx.Module):
    def __init__(self, d: int, f: int, *, rngs: nnx.Rngs):
        self.up = nnx.Linear(d, f, use_bias=False, kernel_init=wp(nnx.initializers.zeros_init(), ("fsdp", None)), rngs=rngs)
        self.down = nnx.Linear(f, d, use_bias=False, kernel_init=wp(nnx.initializers.zeros_init(), (None, "fsdp")), rngs=rngs)


class Net(nnx.Module):
    def __init__(self, n_layers: int, *, rngs: nnx.Rngs):
        self.layers = nnx.List([MLP(4096, 16384, rngs=rngs) for _ in range(n_layers)])


with jax.set_mesh(mesh):
    net = Net(32, rngs=nnx.Rngs(0))
"""
"""32 layers x 2 x 4096 x 16384 float32 = 16 GiB, 2 GiB per device over fsdp=8."""


async def lenses(client: RecordingClient, uri: str) -> list[types.CodeLens]:
    found = await client.text_document_code_lens_async(
        types.CodeLensParams(types.TextDocumentIdentifier(uri))
    )
    return list(found or [])


async def test_lenses_above_classes_and_instantiations(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "net.py", MODELS)

    found = await lenses(client, uri)

    by_line = {lens.range.start.line: lens.command for lens in found}
    assert set(by_line) == {7, 13, 19}  # class MLP, class Net, net = Net(...)
    net = by_line[19]
    assert net is not None and net.command == SHOW_MODEL
    assert net.title == "params 4.3 B · 16.0 GiB f32 · 2.0 GiB / device (fsdp=8)"
    assert by_line[13] is not None and by_line[13].title == net.title  # sized from the instantiation

    table = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(net.command, net.arguments)
    )
    assert isinstance(table, str)
    assert table.startswith("## net (Net)")
    assert "layers[0..31].up.kernel" in table


async def test_class_name_hover_shows_the_totals(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "net.py", MODELS)

    text = await hover_text(client, uri, position_of(MODELS, "Net", line=13))

    assert text is not None
    assert text.startswith("**params 4.3 B · 16.0 GiB f32 · 2.0 GiB / device (fsdp=8)**")
    assert "| param | global shape |" in text


async def test_model_over_hbm_is_sh213(client: RecordingClient, tmp_path: Path) -> None:
    (tmp_path / "shardls.toml").write_text('hbm-per-device = "16GiB"\noptimizer = "adam"\n')
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "net.py", MODELS.replace("Net(32,", "Net(256,"))

    params = await published(client, uri, lambda p: any(d.code == "SH213" for d in p.diagnostics))

    (memory,) = [d for d in params.diagnostics if d.code == "SH213"]
    assert memory.range.start.line == 19
    assert memory.severity == types.DiagnosticSeverity.Warning
    assert "parameters + adam state" in memory.message


async def test_editor_settings_set_hbm_and_optimizer_live(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path, options={"shardls": {"hbmPerDevice": "16GiB"}})
    uri = open_file(client, tmp_path / "net.py", MODELS.replace("Net(32,", "Net(256,"))
    first = await published(client, uri, lambda p: True)
    assert "SH213" not in {d.code for d in first.diagnostics}  # parameters alone: exactly 16 GiB / device

    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams({"shardls": {"hbmPerDevice": "16GiB", "optimizer": "adam"}})
    )
    params = await published(client, uri, lambda p: any(d.code == "SH213" for d in p.diagnostics))
    (memory,) = [d for d in params.diagnostics if d.code == "SH213"]
    assert "parameters + adam state" in memory.message

    (lens,) = [lens for lens in await lenses(client, uri) if lens.range.start.line == 19]
    assert lens.command is not None
    table = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(lens.command.command, lens.command.arguments)
    )
    assert isinstance(table, str) and "adam" in table
    assert "HBM 16.0 GiB / device: 48.0 GiB used, over by 32.0 GiB (DOES NOT FIT)" in table


async def test_class_lens_is_sized_by_a_script_in_another_file(
    client: RecordingClient, tmp_path: Path
) -> None:
    classes, _, instantiation = MODELS.partition("with jax.set_mesh(mesh):\n")
    (tmp_path / "train.py").write_text(
        "import jax\nfrom flax import nnx\n\nfrom net import Net\n\n"
        'mesh = jax.make_mesh((8,), ("fsdp",))\nwith jax.set_mesh(mesh):\n' + instantiation
    )
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "net.py", classes, write=True)

    by_line = {lens.range.start.line: lens.command for lens in await lenses(client, uri)}

    assert set(by_line) == {7, 13}  # the classes; the instantiation is train.py's
    assert by_line[13] is not None
    assert by_line[13].title == "params 4.3 B · 16.0 GiB f32 · 2.0 GiB / device (fsdp=8)"
    table = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(by_line[13].command, by_line[13].arguments)
    )
    assert isinstance(table, str) and "sizes from the instantiation at train.py:8" in table
