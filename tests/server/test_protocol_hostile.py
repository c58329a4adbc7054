"""The server must not die or drift (docs/security.md): hostile or odd protocol traffic against a
real `shardls serve` process, over raw stdio. After each the server is alive and answers a
hover with the layout the document has."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsp_helpers import MODEL, position_of
from raw_client import RawServer

from shardls.server.documents import FOLLOWED_CHARS

EXPECTED = "per device float32[8,4]"
"""What a hover on the spec of MODEL's line 5 says."""
SPEC = position_of(MODEL, 'P(None, "model")')
SERVER_NOT_INITIALIZED, INVALID_REQUEST, METHOD_NOT_FOUND = -32002, -32600, -32601


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    raw = RawServer(tmp_path / "server.log")
    raw.initialize(tmp_path)
    yield raw
    raw.close()


def _hover_params(uri: str) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": SPEC.line, "character": SPEC.character}}


def _still_right(server: RawServer, uri: str) -> None:
    text = server.hover(uri, SPEC.line, SPEC.character)
    assert text is not None and EXPECTED in text.split("\n")[0].replace("`", ""), text
    assert server.process.poll() is None


def _opened(server: RawServer, root: Path) -> str:
    uri = (root / "model.py").as_uri()
    server.open(uri, MODEL)
    _still_right(server, uri)
    return uri


def _log(root: Path) -> str:
    return (root / "server.log").read_text(errors="replace")


def test_a_cancel_request_of_an_object_id_does_not_end_the_server(server: RawServer, tmp_path: Path) -> None:
    uri = _opened(server, tmp_path)

    for odd in ({}, [], [1], {"a": 1}, 1.5, True, None):
        server.notify("$/cancelRequest", {"id": odd})
    server.notify("$/cancelRequest", None)
    server.notify("$/cancelRequest", [])

    _still_right(server, uri)
    assert server.errors_logged() == []


# -- a type-confusion fuzz of every method ----------------------------------------------------

_METHODS: dict[str, bool] = {
    # method: whether it is a request (answered) or a notification
    "textDocument/hover": True,
    "textDocument/completion": True,
    "textDocument/definition": True,
    "textDocument/references": True,
    "textDocument/codeAction": True,
    "textDocument/codeLens": True,
    "textDocument/inlayHint": True,
    "textDocument/diagnostic": True,
    "workspace/executeCommand": True,
    "workspace/symbol": True,
    "shutdown": False,  # sent as a notification here: a request would end the session
    "$/cancelRequest": False,
    "$/setTrace": False,
    "$/progress": False,
    "initialized": False,
    "textDocument/didOpen": False,
    "textDocument/didChange": False,
    "textDocument/didSave": False,
    "textDocument/didClose": False,
    "notebookDocument/didOpen": False,
    "notebookDocument/didChange": False,
    "notebookDocument/didClose": False,
    "workspace/didChangeConfiguration": False,
    "workspace/didChangeWatchedFiles": False,
    "window/workDoneProgress/cancel": False,
}
_ODD_VALUES: list[object] = [
    None,
    True,
    0,
    -1,
    2**63,
    1.5,
    float("1e308"),
    "",
    "x" * 300,
    "file:///%00",
    [],
    [None],
    {},
    {"uri": 5},
    {"line": -5, "character": "a"},
]


def _valid_params(method: str, uri: str) -> dict[str, Any]:
    """Well-formed params of each method (the fuzz then confuses their parts)."""
    position = {"line": SPEC.line, "character": SPEC.character}
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 9, "character": 0}}
    document = {"uri": uri}
    change = {"range": whole, "text": "x"}
    notebook = {"uri": uri + ".ipynb", "notebookType": "jupyter-notebook", "version": 1, "cells": []}
    return {
        "textDocument/hover": {"textDocument": document, "position": position},
        "textDocument/completion": {"textDocument": document, "position": position},
        "textDocument/definition": {"textDocument": document, "position": position},
        "textDocument/references": {
            "textDocument": document,
            "position": position,
            "context": {"includeDeclaration": True},
        },
        "textDocument/codeAction": {"textDocument": document, "range": whole, "context": {"diagnostics": []}},
        "textDocument/codeLens": {"textDocument": document},
        "textDocument/inlayHint": {"textDocument": document, "range": whole},
        "textDocument/diagnostic": {"textDocument": document},
        "workspace/executeCommand": {"command": "shardls.x", "arguments": [1]},
        "workspace/symbol": {"query": "x"},
        "$/cancelRequest": {"id": 1},
        "$/setTrace": {"value": "off"},
        "$/progress": {"token": 1, "value": {"kind": "end"}},
        "initialized": {},
        "textDocument/didOpen": {
            "textDocument": {"uri": uri + ".other.py", "languageId": "python", "version": 1, "text": "x"}
        },
        "textDocument/didChange": {
            "textDocument": {"uri": uri + ".other.py", "version": 2},
            "contentChanges": [change],
        },
        "textDocument/didSave": {"textDocument": document},
        "textDocument/didClose": {"textDocument": {"uri": uri + ".other.py"}},
        "notebookDocument/didOpen": {"notebookDocument": notebook, "cellTextDocuments": []},
        "notebookDocument/didChange": {
            "notebookDocument": {"uri": notebook["uri"], "version": 2},
            "change": {
                "cells": {"textContent": [{"document": {"uri": "c", "version": 1}, "changes": [change]}]}
            },
        },
        "notebookDocument/didClose": {"notebookDocument": {"uri": notebook["uri"]}, "cellTextDocuments": []},
        "workspace/didChangeConfiguration": {"settings": {"shardls": {}}},
        "workspace/didChangeWatchedFiles": {"changes": [{"uri": uri, "type": 2}]},
        "window/workDoneProgress/cancel": {"token": 1},
    }.get(method, {})


def _confuse(value: object, rng: random.Random) -> object:
    """The value with one part (or the whole) replaced by a value of another type."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key = rng.choice(sorted(value))
        return {**value, key: _confuse(value[key], rng)}
    if isinstance(value, list) and value and rng.random() < 0.8:
        index = rng.randrange(len(value))
        return [*value[:index], _confuse(value[index], rng), *value[index + 1 :]]
    return rng.choice(_ODD_VALUES)


def test_type_confused_messages_of_every_method(server: RawServer, tmp_path: Path) -> None:
    """400 seeded messages, each a well-formed message of one method with one part of its
    params (or all of them) of another type: every request is answered, nothing escapes."""
    uri = _opened(server, tmp_path)
    rng = random.Random(15)
    requests = []
    for _ in range(400):
        method = rng.choice(sorted(_METHODS))
        params = _confuse(_valid_params(method, uri), rng)
        if _METHODS[method]:
            requests.append((server.request(method, params), method, params))
        else:
            server.notify(method, params)

    for number, method, params in requests:
        answer = server.response(number)
        assert "result" in answer or answer["error"]["code"] in (-32601, -32602, -32603), (
            method,
            params,
            answer,
        )
    _still_right(server, uri)
    assert "Traceback" not in _log(tmp_path)


# -- the session's rules ----------------------------------------------------------------------


def test_a_request_before_initialize_is_answered_server_not_initialized(tmp_path: Path) -> None:
    server = RawServer(tmp_path / "server.log")
    try:
        early = server.call("textDocument/hover", _hover_params((tmp_path / "model.py").as_uri()))
        early_open = {"uri": "file:///a.py", "languageId": "python", "version": 1, "text": "x"}
        server.notify("textDocument/didOpen", {"textDocument": early_open})
        server.initialize(tmp_path)
        uri = _opened(server, tmp_path)
    finally:
        server.close()

    assert early["error"]["code"] == SERVER_NOT_INITIALIZED
    assert uri
    assert "textDocument/didOpen before initialize: ignored" in _log(tmp_path)


def test_a_second_initialize_is_refused_and_keeps_the_open_documents(
    server: RawServer, tmp_path: Path
) -> None:
    uri = _opened(server, tmp_path)

    again = server.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})

    assert again["error"]["code"] == INVALID_REQUEST
    _still_right(server, uri)


def test_a_notification_method_sent_as_a_request_is_answered(server: RawServer, tmp_path: Path) -> None:
    uri = _opened(server, tmp_path)

    answers = [
        server.call("$/progress", {"token": 1, "value": {}}),
        server.call("$/setTrace", {"value": "off"}),
        server.call("$/noSuchThing", {}),
        server.call("textDocument/didSave", {"textDocument": {"uri": uri}}),
    ]

    assert [answer["error"]["code"] for answer in answers] == [METHOD_NOT_FOUND] * 4
    _still_right(server, uri)


def test_invalid_params_log_one_line_not_a_traceback(server: RawServer, tmp_path: Path) -> None:
    uri = _opened(server, tmp_path)

    answer = server.call("textDocument/hover", {"textDocument": 5, "position": {"line": "a"}})
    server.notify("textDocument/didChange", {"textDocument": 5, "contentChanges": "x"})
    _still_right(server, uri)

    assert answer["error"]["code"] == -32602
    assert "position.line" in answer["error"]["message"]
    log = _log(tmp_path).splitlines()
    assert [line for line in log if "textDocument/hover" in line and "invalid params" in line] != []
    assert len(log) == 2, log  # the hover and the didChange, one line each
    assert "Traceback" not in _log(tmp_path)


def test_each_spelling_of_a_files_uri_gets_its_diagnostics(server: RawServer, tmp_path: Path) -> None:
    plain = (tmp_path / "model.py").as_uri()
    spellings = [
        plain,
        plain.replace("/model.py", "/./model.py"),
        plain.replace("model.py", "%6Dodel.py"),
        plain.replace("file://", "file://localhost"),
    ]
    for spelling in spellings:
        server.open(spelling, MODEL)

    for spelling in spellings:
        _still_right(server, spelling)
        report = server.call("textDocument/diagnostic", {"textDocument": {"uri": spelling}})
        assert sorted(d["code"] for d in report["result"]["items"]) == ["SH001", "SH005"], spelling
    server.notify("textDocument/didClose", {"textDocument": {"uri": spellings[0]}})
    _still_right(server, spellings[1])  # closing one spelling leaves the others open


def test_an_edit_of_a_notebook_cell_that_is_not_open_is_ignored(server: RawServer, tmp_path: Path) -> None:
    uri = _opened(server, tmp_path)
    notebook = (tmp_path / "nb.ipynb").as_uri()
    cell = notebook + "#cell1"
    server.open_notebook(notebook, cell, MODEL)
    end = len("import jax")
    change = {
        "range": {"start": {"line": 0, "character": end}, "end": {"line": 0, "character": end}},
        "text": "  # ok",
    }
    server.notify(
        "notebookDocument/didChange",
        {
            "notebookDocument": {"uri": notebook, "version": 2},
            "change": {
                "cells": {
                    "textContent": [
                        {"document": {"uri": notebook + "#never-opened", "version": 2}, "changes": [change]},
                        {"document": {"uri": cell, "version": 2}, "changes": [change]},
                    ]
                }
            },
        },
    )

    _still_right(server, uri)
    text = server.hover(cell, SPEC.line, SPEC.character)
    assert text is not None and EXPECTED in text.replace("`", "")  # the open cell's edit applied
    assert server.errors_logged() == []
    assert "#never-opened, which is not open: ignored" in _log(tmp_path)


# -- line ends ----------------------------------------------------------------------------------


def test_incremental_edits_after_characters_python_takes_for_line_ends(
    server: RawServer, tmp_path: Path
) -> None:
    """A form feed, `\\x85` and U+2028 before the spec: an edit of the spec's line must land on
    that line (str.splitlines would count each as a line end and edit a line too far down)."""
    odd = "# \x0c form feed \x85 next line \u2028 separator \u2029 \x1c\x1d\x1e \x0b\n"
    text = odd + MODEL
    uri = (tmp_path / "model.py").as_uri()
    server.open(uri, text)
    line = SPEC.line + 1
    start = text.split("\n")[line].index('P(None, "model")')
    change = {
        "range": {
            "start": {"line": line, "character": start},
            "end": {"line": line, "character": start + 16},
        },
        "text": 'P("model", None)',
    }
    server.notify(
        "textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]}
    )

    hover = server.hover(uri, line, start + 2)

    assert hover is not None and "per device float32[2,16]" in hover.replace("`", ""), hover


# -- a document over the size limit -------------------------------------------------------------


def test_edits_to_a_50_mb_document_are_ignored_at_once(tmp_path: Path) -> None:
    """Each of 20 one-character edits took 3 s (pygls split the 50 MB text into lines and
    rebuilt it, then the server re-read it); once a document is known to be too large, an
    incremental edit costs a check of its length: the log says each was ignored. A change of the
    whole text follows the document again."""
    server = RawServer(tmp_path / "server.log", log_level="debug")
    try:
        server.initialize(tmp_path)
        uri = (tmp_path / "huge.py").as_uri()
        server.open(uri, MODEL + "# padding\n" * (50_000_000 // 10))
        edit = {
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "text": "#",
        }
        frames = b""
        for version in range(2, 22):
            params = {"textDocument": {"uri": uri, "version": version}, "contentChanges": [edit]}
            body = json.dumps(
                {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": params}
            ).encode()
            frames += b"Content-Length: %d\r\n\r\n" % len(body) + body
        server.send_bytes(frames)
        report = server.call("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        server.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 30}, "contentChanges": [{"text": MODEL}]},
        )
        _still_right(server, uri)
    finally:
        server.close()

    assert [d["code"] for d in report["result"]["items"]] == ["SH210"]
    ignored = f"An edit of {uri}, over {FOLLOWED_CHARS} characters: ignored"
    assert _log(tmp_path).count(ignored) == 20
