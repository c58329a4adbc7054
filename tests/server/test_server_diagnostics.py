"""Diagnostics pushed and pulled, with rule pages, related information and deprecation tags;
edits coalesced into one analysis of the latest version; a syntax error elsewhere in the file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_helpers import (
    HANG,
    MODEL,
    RecordingClient,
    codes,
    having,
    initialize,
    open_file,
    published,
    replace_all,
    word_range,
)
from lsprotocol import types

from shardls.analysis.rules import RULE_DOCS

pytestmark = pytest.mark.asyncio

LEGACY = MODEL + '\nwith mesh:\n    y = jax.lax.with_sharding_constraint(x, P(None, "model"))\n'


async def test_pushed_diagnostics(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "model.py", LEGACY)

    params = await published(client, uri, having("SH001", "SH005", "SH013", "SH203"))

    assert params.version == 1
    by_code = {d.code: d for d in params.diagnostics}
    assert sorted(by_code) == ["SH001", "SH005", "SH013", "SH203"]
    indivisible = by_code["SH001"]
    assert indivisible.range == word_range(MODEL, '"model", None', len('"model"'))
    assert indivisible.severity == types.DiagnosticSeverity.Error
    assert indivisible.source == "shardls"
    assert indivisible.code_description == types.CodeDescription(f"{RULE_DOCS}SH001.md")
    assert list(indivisible.related_information or ()) == [
        types.DiagnosticRelatedInformation(
            types.Location(uri, word_range(MODEL, 'jax.make_mesh((2, 4), ("data", "model"))')),
            "mesh defined here",
        )
    ]
    assert "did you mean 'model'?" in by_code["SH005"].message
    assert list(by_code["SH203"].tags or ()) == [types.DiagnosticTag.Deprecated]
    assert by_code["SH203"].range == word_range(LEGACY, "mesh:", len("mesh"))


async def test_pulled_diagnostics(client: RecordingClient, tmp_path: Path) -> None:
    await initialize(client, tmp_path, pull=True)
    uri = open_file(client, tmp_path / "model.py", MODEL)

    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))
    )

    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    assert codes(report.items) == ["SH001", "SH005"]
    typo = next(d for d in report.items if d.code == "SH005")
    assert typo.range == word_range(MODEL, '"modle"')
    assert typo.related_information is not None
    assert client.published == []  # a pulling client is never pushed to

    other = open_file(client, tmp_path / "other.py", "import jax\n")
    replace_all(client, other, 2, "import jax\nimport numpy\n")
    deadline = asyncio.get_running_loop().time() + HANG
    while client.diagnostic_refresh_count == 0 and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.02)
    assert client.diagnostic_refresh_count > 0  # model.py may import other.py: pull again


async def test_a_burst_of_edits_is_coalesced_up_to_its_last_version(
    client: RecordingClient, tmp_path: Path
) -> None:
    """The first edit of a burst finds the server idle and is analysed at once (its publish may
    come before the rest of the burst is read: an incremental analysis of it takes a few ms);
    the edits that come meanwhile wait and are analysed together, at the last version, which is
    published last. A version may be published twice: the open's first analysis publishes what
    it has found so far (`Diagnostics.partial`), and on a loaded machine the wait below can end
    on that, before the open's complete publish."""
    await initialize(client, tmp_path)
    uri = open_file(client, tmp_path / "model.py", MODEL)
    await published(client, uri, lambda p: p.version == 1)

    for version in range(2, 7):  # faster than the analysis delay
        replace_all(
            client, uri, version, MODEL.replace('P("modle")', 'P("model")' if version == 6 else 'P("x")')
        )
    params = await published(client, uri, lambda p: p.version == 6)

    assert codes(params.diagnostics) == ["SH001"]
    versions = [p.version for p in client.published if p.uri == uri]
    assert versions[0] == 1 and versions[-1] == 6
    assert versions == sorted(versions)  # never an older version after a newer one
    assert len(set(versions)) < 6  # not one analysis per keystroke


async def test_a_syntax_error_elsewhere_keeps_the_rest_analysed(
    client: RecordingClient, tmp_path: Path
) -> None:
    await initialize(client, tmp_path)
    broken = MODEL + "\ndef broken(:\n    pass\n"
    uri = open_file(client, tmp_path / "model.py", broken)

    params = await published(client, uri, having("SH001", "SH005", "SH209"))

    syntax = next(d for d in params.diagnostics if d.code == "SH209")
    assert syntax.range.start.line == 9
    assert syntax.severity == types.DiagnosticSeverity.Warning


async def test_editing_an_imported_file_republishes_its_importers(
    client: RecordingClient, tmp_path: Path
) -> None:
    await initialize(client, tmp_path)
    config = 'AXES = ("data", "model")\n'
    model = (
        "import jax\nimport jax.numpy as jnp\nfrom jax.sharding import NamedSharding, PartitionSpec as P\n"
        "from config import AXES\n\nmesh = jax.make_mesh((2, 4), AXES)\n"
        'x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P(None, "model")))\n'
    )
    config_uri = open_file(client, tmp_path / "config.py", config, write=True)
    model_uri = open_file(client, tmp_path / "model.py", model, write=True)
    await published(client, model_uri, lambda p: not p.diagnostics)

    replace_all(client, config_uri, 2, 'AXES = ("data", "tensor")\n')  # not saved: the editor's text counts
    params = await published(client, model_uri, lambda p: bool(p.diagnostics))

    assert codes(params.diagnostics) == ["SH005"]
    assert "(data=2, tensor=4)" in params.diagnostics[0].message
