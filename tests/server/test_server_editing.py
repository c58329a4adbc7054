"""Inlay hints, completion and quick fixes: what the editor shows and offers while typing."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_helpers import (
    MODEL,
    RecordingClient,
    apply_edits,
    codes,
    having,
    initialize,
    open_file,
    position_of,
    published,
    send_edits,
)
from lsprotocol import types

pytestmark = pytest.mark.asyncio


async def test_inlay_hints_show_each_devices_block(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "model.py", MODEL)

    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(8, 0))
        )
    )

    assert hints is not None
    assert [(hint.position.line, hint.label) for hint in hints] == [(5, "→ [8, 4] ×2")]
    assert hints[0].position.character == len(MODEL.split("\n")[5])
    assert (
        hints[0].tooltip
        == "device_put x: float32[8,16@model] → per device float32[8,4] ×2 copies, 128 B/device"
    )


SPECS = (
    MODEL
    + """
from flax import nnx

LOGICAL_RULES = (("embed", "data"), ("mlp", "model"))
y = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P(None, "")))
init = nnx.with_partitioning(nnx.initializers.zeros_init(), (None, ""))
"""
)


async def test_completion_offers_mesh_axes_and_logical_names_inside_specs(
    client: RecordingClient, tmp_path: Path
) -> None:
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "model.py", SPECS)

    async def labels_at(position: types.Position) -> dict[str, str | None]:
        answer = await client.text_document_completion_async(
            types.CompletionParams(types.TextDocumentIdentifier(uri), position)
        )
        assert isinstance(answer, types.CompletionList)
        return {item.label: item.detail for item in sorted(answer.items, key=lambda i: i.sort_text or "")}

    in_spec = await labels_at(position_of(SPECS, 'P(None, "")', offset=len('P(None, "')))
    in_tuple = await labels_at(position_of(SPECS, '(None, "")', line=12, offset=len('(None, "')))
    outside = await labels_at(position_of(SPECS, "zeros_init", offset=2))

    assert in_spec == {
        "data": "mesh axis, size 2 of data=2, model=4",
        "model": "mesh axis, size 4 of data=2, model=4",
        "embed": "logical axis → data",
        "mlp": "logical axis → model",
    }
    assert list(in_tuple) == ["data", "model", "embed", "mlp"]
    assert outside == {}


async def test_quick_fixes_edit_the_code_and_the_result_is_analysed_again(
    client: RecordingClient, tmp_path: Path
) -> None:
    await initialize(client, tmp_path)
    text = MODEL + "s = jax.device_put(jnp.zeros(()), NamedSharding(mesh, P(None)))\n"
    uri = open_file(client, tmp_path / "model.py", text)
    first = await published(client, uri, having("SH001", "SH003", "SH005"))

    titles = {}
    for diagnostic in first.diagnostics:
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(uri),
                diagnostic.range,
                types.CodeActionContext([diagnostic]),
            )
        )
        assert actions is not None
        titles[diagnostic.code] = {
            action.title: action for action in actions if isinstance(action, types.CodeAction)
        }

    assert list(titles["SH005"]) == [
        "Replace 'modle' with 'model' → per device [2, 16] ×2",
        "Ignore SH005 on this line",
    ]
    assert list(titles["SH001"]) == [
        "Leave dimension 0 unsharded (None) → per device [50257, 16] ×8",
        "Ignore SH001 on this line",
    ]
    assert list(titles["SH003"]) == ["Write P() for a scalar → per device [] ×8", "Ignore SH003 on this line"]

    chosen = [
        titles["SH005"]["Replace 'modle' with 'model' → per device [2, 16] ×2"],
        titles["SH001"]["Leave dimension 0 unsharded (None) → per device [50257, 16] ×8"],
        titles["SH003"]["Ignore SH003 on this line"],
    ]
    edits = [edit for action in chosen for edit in (action.edit and action.edit.changes or {})[uri]]
    fixed = apply_edits(text, edits)
    send_edits(client, uri, 2, edits)

    after = await published(client, uri, lambda p: p.version == 2)
    assert not after.diagnostics
    assert 'P("model")' in fixed and "P(None, None)" in fixed and "# shardls: ignore[SH003]" in fixed
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            types.TextDocumentIdentifier(uri), types.Range(types.Position(0, 0), types.Position(9, 0))
        )
    )
    assert hints is not None and [hint.label for hint in hints] == [
        "→ [8, 4] ×2",
        "→ [50257, 16] ×8",
        "→ [2, 16] ×2",
    ]


async def test_quick_fixes_for_deprecated_mesh_context(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    text = (
        MODEL.replace('P("modle")', 'P("model")')
        + '\nwith mesh:\n    y = jax.lax.with_sharding_constraint(x, P(None, "model"))\n'
    )
    uri = open_file(client, tmp_path / "model.py", text)
    first = await published(client, uri, lambda p: "SH203" in codes(p.diagnostics))
    legacy = next(d for d in first.diagnostics if d.code == "SH203")

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri), legacy.range, types.CodeActionContext([legacy])
        )
    )

    assert actions is not None
    fix = next(a for a in actions if isinstance(a, types.CodeAction) and a.is_preferred)
    assert fix.title == "Use `with jax.set_mesh(mesh):`"
    assert fix.edit is not None and fix.edit.changes is not None
    fixed = apply_edits(text, fix.edit.changes[uri])
    assert "\nwith jax.set_mesh(mesh):\n" in fixed
    send_edits(client, uri, 2, fix.edit.changes[uri])
    after = await published(client, uri, lambda p: p.version == 2)
    assert "SH203" not in codes(after.diagnostics)


async def test_quick_fix_for_the_deprecated_param_keyword(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    text = (
        "import jax\nimport jax.numpy as jnp\nfrom flax import nnx\n\n"
        'mesh = jax.make_mesh((2, 4), ("data", "model"))\n'
        "with jax.set_mesh(mesh):\n"
        '    scale = nnx.Param(jnp.ones((8, 16)), sharding=("data", None))\n'
    )
    uri = open_file(client, tmp_path / "model.py", text)
    first = await published(client, uri, lambda p: bool(p.diagnostics))
    assert codes(first.diagnostics) == ["SH204"]

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            types.TextDocumentIdentifier(uri),
            first.diagnostics[0].range,
            types.CodeActionContext(list(first.diagnostics)),
        )
    )

    assert actions is not None
    fix = next(a for a in actions if isinstance(a, types.CodeAction) and a.is_preferred)
    assert fix.title == "Use out_sharding= instead of sharding="
    assert fix.edit is not None and fix.edit.changes is not None
    assert 'nnx.Param(jnp.ones((8, 16)), out_sharding=("data", None))' in apply_edits(
        text, fix.edit.changes[uri]
    )
    send_edits(client, uri, 2, fix.edit.changes[uri])
    assert not (await published(client, uri, lambda p: p.version == 2)).diagnostics


async def test_an_indivisible_dimension_can_move_to_an_axis_that_divides_it(
    client: RecordingClient, tmp_path: Path
) -> None:
    await initialize(client, tmp_path)
    text = MODEL.replace(
        '(8, 16)), NamedSharding(mesh, P("modle"))', '(6, 16)), NamedSharding(mesh, P("model"))'
    )
    uri = open_file(client, tmp_path / "model.py", text)
    first = await published(client, uri, lambda p: any(d.range.start.line == 7 for d in p.diagnostics))
    rows = next(d for d in first.diagnostics if d.range.start.line == 7)

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(uri), rows.range, types.CodeActionContext([rows]))
    )

    assert actions is not None
    assert [a.title for a in actions] == [
        'Shard dimension 0 over "data" → per device [3, 16] ×4',
        "Leave dimension 0 unsharded (None) → per device [6, 16] ×8",
        "Ignore SH001 on this line",
    ]
