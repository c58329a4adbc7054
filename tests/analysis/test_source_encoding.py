"""Source files are read as Python reads them: UTF-8, or the encoding of a PEP 263 coding line
(as `tokenize.open` does); what cannot be decoded is SH210 with the reason, never a crash."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from shardls.analysis.settings import Settings
from shardls.analysis.workspace import Workspace
from shardls.cli.check_files import CheckJob, UnreadableSource, check_file, read_source
from shardls.files import decode_source

BODY = (
    "import jax\n"
    "import jax.numpy as jnp\n"
    "from jax.sharding import NamedSharding, PartitionSpec as P\n"
    "mesh = jax.make_mesh((2, 4), ('data', 'model'))\n"
    "y = jax.device_put(jnp.zeros((9, 16)), NamedSharding(mesh, P('data')))  # modèle\n"
)


def _check(path: Path) -> list[str]:
    report = check_file(CheckJob(path, path.name, Settings(), (path.parent,)))
    assert report.internal_error is None
    return [d.code for d in report.diagnostics]


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252", "iso-8859-15"])
def test_a_coding_line_is_honoured(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "model.py"
    path.write_bytes((f"# -*- coding: {encoding} -*-\n" + BODY).encode(encoding))
    text, _ = read_source(path)
    assert "modèle" in text
    assert _check(path) == ["SH001"]  # analysed: the indivisible dimension is found


def test_the_coding_line_may_be_on_the_second_line(tmp_path: Path) -> None:
    path = tmp_path / "model.py"
    path.write_bytes(("#!/usr/bin/env python\n# vim: set fileencoding=latin-1 :\n" + BODY).encode("latin-1"))
    assert "modèle" in read_source(path)[0]


def test_utf8_with_and_without_a_byte_order_mark(tmp_path: Path) -> None:
    assert decode_source(BODY.encode()) == BODY
    assert decode_source(codecs.BOM_UTF8 + BODY.encode()) == BODY


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("x = 'è'\n".encode("latin-1"), "cannot read the file as UTF-8 text: invalid continuation byte"),
        (b"# coding: klingon\nx = 1\n", "unknown encoding"),
        (codecs.BOM_UTF8 + b"# coding: latin-1\nx = 1\n", "encoding problem"),
        (b"# coding: ascii\nx = '\xe8'\n", "cannot read the file as ascii text"),
    ],
)
def test_undecodable_files_say_why(tmp_path: Path, raw: bytes, reason: str) -> None:
    path = tmp_path / "bad.py"
    path.write_bytes(raw)
    with pytest.raises(UnreadableSource, match=reason):
        read_source(path)
    report = check_file(CheckJob(path, "bad.py", Settings(), (tmp_path,)))
    assert [d.code for d in report.diagnostics] == ["SH210"]
    assert reason.split(":")[0] in report.diagnostics[0].message


def test_an_imported_module_is_read_in_its_encoding(tmp_path: Path) -> None:
    (tmp_path / "sizes.py").write_bytes(
        "# coding: latin-1\nNOM = 'modèle'\nVOCAB = 50257\n".encode("latin-1")
    )
    workspace = Workspace([tmp_path])
    text = workspace.text_of(str(tmp_path / "sizes.py"))
    assert text is not None and "modèle" in text
