"""Abusive LSP traffic against the real server process, over raw stdio: the server stays up and
answers correctly afterwards, and its memory stays flat across 1,000 open/close cycles."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsp_helpers import MODEL, position_of
from raw_client import RawServer
from robust_helpers import HANG

from shardls.server.transport import MAX_CONTENT_LENGTH

EXPECTED = "per device float32[8,4]"
"""What a hover on line 5's spec must say, whatever happened before (tests/server/lsp_helpers.py)."""
SPEC = position_of(MODEL, 'P(None, "model")')
MEMORY_SLACK = 40 * 2**20
"""VmRSS growth allowed over 1,000 open/close cycles of distinct documents after a warm-up; a
fifth of it for the same documents reopened (docs/security.md)."""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    raw = RawServer(tmp_path / "server.log")
    raw.initialize(tmp_path)
    yield raw
    raw.close()


def _still_right(server: RawServer, uri: str) -> None:
    """The server is up and answers a hover correctly (within HANG: slow is not wrong here;
    benchmarks/bench_robustness.py times the server under abuse)."""
    text = server.hover(uri, SPEC.line, SPEC.character)
    assert text is not None and EXPECTED in text.split("\n")[0].replace("`", "")
    assert server.process.poll() is None


def _opened(server: RawServer, root: Path, name: str = "model.py") -> str:
    uri = (root / name).as_uri()
    server.open(uri, MODEL)
    _still_right(server, uri)
    return uri


PARSE_ERROR, INVALID_REQUEST = -32700, -32600

MALFORMED_FRAMES: dict[str, tuple[bytes, int | None, object]] = {
    # name: (body, the error code answered, the id of that answer); None: no answer.
    "truncated JSON": (
        b'{"jsonrpc": "2.0", "id": 900, "method": "textDocument/hover", "params": {',
        PARSE_ERROR,
        None,
    ),
    "not JSON": (b"\xff\xfe garbage \x00", PARSE_ERROR, None),
    "an empty body": (b"", PARSE_ERROR, None),
    "deeply nested JSON": (b"[" * 100_000 + b"]" * 100_000, PARSE_ERROR, None),
    "a JSON array (a batch)": (b"[1, 2, 3]", INVALID_REQUEST, None),
    "a JSON string": (b'"hello"', INVALID_REQUEST, None),
    "JSON null": (b"null", INVALID_REQUEST, None),
    "no jsonrpc field": (b'{"id": 901, "method": "textDocument/hover", "params": {}}', INVALID_REQUEST, 901),
    "wrong jsonrpc version": (b'{"jsonrpc": "1.0", "id": 902, "method": "shutdown"}', INVALID_REQUEST, 902),
    "a method that is not a string": (b'{"jsonrpc": "2.0", "id": "s", "method": 5}', INVALID_REQUEST, "s"),
    "neither request nor response": (b'{"jsonrpc": "2.0", "id": 903}', INVALID_REQUEST, 903),
    "id of an object": (
        b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "textDocument/hover", "params": {}}',
        INVALID_REQUEST,
        None,
    ),
    "response to nothing": (b'{"jsonrpc": "2.0", "id": 99999, "result": {"x": 1}}', None, 99999),
    "error to nothing": (
        b'{"jsonrpc": "2.0", "id": 99998, "error": {"code": 1, "message": "m"}}',
        None,
        99998,
    ),
}


def test_malformed_bodies_are_answered_with_json_rpc_errors(server: RawServer, tmp_path: Path) -> None:
    uri = _opened(server, tmp_path)
    for name, (body, code, number) in MALFORMED_FRAMES.items():
        server.send_body(body)
        _still_right(server, uri)  # the error, if any, was sent before this answer
        if code is None:
            assert not server.has_response(number), name
        else:
            answer = server.response(number, timeout=0)
            assert answer["error"]["code"] == code, (name, answer)
            assert answer["jsonrpc"] == "2.0" and answer["id"] == number
    assert server.errors_logged() == []


MALFORMED_HEADERS = {
    "garbage header lines": b"Garbage\r\nX-Other: 1\r\n",
    "empty lines": b"\r\n\r\n\r\n",
    "no Content-Length": b"Content-Type: application/json\r\n\r\n{}",
    "non-numeric length": b"Content-Length: abc\r\n\r\n{}",
    "negative length": b"Content-Length: -5\r\n\r\n{}",
    "a length over the cap": b"Content-Length: %d\r\n\r\n{}" % (MAX_CONTENT_LENGTH + 1),
    "a length of 10**30": b"Content-Length: %d\r\n\r\n" % 10**30,
    "a header line of 100 KB": b"X" * 100_000,
    "a JSON body where a header belongs": b'{"jsonrpc": "2.0", "id": 904, "method": "shutdown"}\r\n\r\n',
    "a body longer than declared": b"Content-Length: 1\r\n\r\n{}}}",
}


@pytest.mark.parametrize("raw", MALFORMED_HEADERS.values(), ids=MALFORMED_HEADERS.keys())
def test_a_malformed_header_is_skipped_and_the_next_message_served(
    server: RawServer, tmp_path: Path, raw: bytes
) -> None:
    uri = _opened(server, tmp_path)

    server.send_bytes(raw)

    _still_right(server, uri)
    _still_right(server, uri)
    assert not server.has_response(904)  # the stray body was not taken for a request
    assert server.errors_logged() == []


def test_frames_with_lf_line_ends_are_read(server: RawServer, tmp_path: Path) -> None:
    uri = _opened(server, tmp_path)
    position = {"line": SPEC.line, "character": SPEC.character}
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 905,
            "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": position},
        }
    ).encode()

    server.send_bytes(b"content-length: %d\n\n" % len(body) + body)

    assert EXPECTED in server.response(905)["result"]["contents"]["value"].replace("`", "")


def test_the_end_of_the_input_ends_the_server_cleanly(tmp_path: Path) -> None:
    server = RawServer(tmp_path / "server.log")
    server.initialize(tmp_path)
    server.send_bytes(b'Content-Length: 100\r\n\r\n{"jsonrpc": ')  # cut short
    assert server.process.stdin is not None

    server.process.stdin.close()

    assert server.process.wait(timeout=HANG) == 0
    assert "Traceback" not in (tmp_path / "server.log").read_text()
    server.close()


def test_unknown_methods(server: RawServer, tmp_path: Path) -> None:
    uri = _opened(server, tmp_path)

    answer = server.call("shardls/noSuchMethod", {"a": 1})
    server.notify("shardls/noSuchNotification", [1, 2])
    server.notify("$/noSuchThing", None)
    dollar = server.call("$/noSuchRequest", {})

    assert answer["error"]["code"] == -32601  # MethodNotFound
    assert "error" in dollar
    _still_right(server, uri)


WRONG_PARAMS = [
    ("textDocument/hover", None),
    ("textDocument/hover", []),
    ("textDocument/hover", "text"),
    ("textDocument/hover", {"textDocument": 5, "position": {"line": 0, "character": 0}}),
    ("textDocument/hover", {"textDocument": {"uri": None}, "position": {"line": "a", "character": []}}),
    (
        "textDocument/hover",
        {"textDocument": {"uri": "file:///x.py"}, "position": {"line": -1, "character": -1}},
    ),
    ("textDocument/inlayHint", {"textDocument": {"uri": "file:///x.py"}, "range": "everything"}),
    ("textDocument/codeAction", {"textDocument": {}, "range": {}, "context": {"diagnostics": 3}}),
    ("textDocument/completion", {"textDocument": {"uri": 1}}),
    ("textDocument/definition", {"position": {}}),
    ("workspace/executeCommand", {"command": 12, "arguments": {"x": 1}}),
    ("textDocument/diagnostic", {"textDocument": {"uri": "::::"}}),
]


def test_params_of_the_wrong_type(server: RawServer, tmp_path: Path) -> None:
    uri = _opened(server, tmp_path)
    for method, params in WRONG_PARAMS:
        answer = server.call(method, params)
        assert "error" in answer or "result" in answer, (method, params, answer)
        _still_right(server, uri)
    for _, params in WRONG_PARAMS:
        server.notify("textDocument/didChange", params)
        server.notify("textDocument/didOpen", params)
        server.notify("textDocument/didClose", params)
    _still_right(server, uri)


def _document(uri: str) -> dict[str, str]:
    return {"uri": uri}


def test_positions_and_ranges_outside_the_document(server: RawServer, tmp_path: Path) -> None:
    uri = _opened(server, tmp_path)
    far = [(10**9, 0), (0, 10**9), (5, 10**6), (2**31 - 1, 2**31 - 1), (len(MODEL.split("\n")), 0)]
    for line, character in far:
        text = server.hover(uri, line, character)  # a column past the end means the line's end
        assert text is None or line == 5
        for method, extra in (
            ("textDocument/inlayHint", {}),
            ("textDocument/codeAction", {"context": {"diagnostics": []}}),
        ):
            whole = {"start": {"line": line, "character": character}, "end": {"line": 0, "character": 0}}
            answer = server.call(method, {"textDocument": _document(uri), "range": whole, **extra})
            assert "error" not in answer or answer["error"]["code"] in (-32602, -32603), answer
        for method in ("textDocument/completion", "textDocument/definition", "textDocument/references"):
            position = {"line": line, "character": character}
            params = {
                "textDocument": _document(uri),
                "position": position,
                "context": {"includeDeclaration": True},
            }
            answer = server.call(method, params)
            assert "error" not in answer or answer["error"]["code"] in (-32602, -32603), answer
    huge = {"start": {"line": 0, "character": 0}, "end": {"line": 10**9, "character": 10**9}}
    hints = server.call("textDocument/inlayHint", {"textDocument": _document(uri), "range": huge})
    assert hints["result"], hints  # the whole document's hints
    _still_right(server, uri)
    assert server.errors_logged() == []


def test_edits_to_unknown_documents_and_double_close(server: RawServer, tmp_path: Path) -> None:
    uri = _opened(server, tmp_path)
    never = (tmp_path / "never.py").as_uri()
    change = {
        "range": {"start": {"line": 3, "character": 0}, "end": {"line": 9, "character": 4}},
        "text": "x",
    }
    server.notify(
        "textDocument/didChange", {"textDocument": {"uri": never, "version": 2}, "contentChanges": [change]}
    )
    server.notify("textDocument/didClose", {"textDocument": {"uri": never}})
    for odd in (
        "untitled:Untitled-1",
        "http://example.com/a.py",
        "file:///%00/a.py",
        "file:///" + "a/" * 2000 + "b.py",
    ):
        server.open(odd, MODEL)
        server.hover(odd, SPEC.line, SPEC.character)
        server.notify("textDocument/didClose", {"textDocument": {"uri": odd}})
    other = _opened(server, tmp_path, "other.py")
    server.notify("textDocument/didClose", {"textDocument": {"uri": other}})
    server.notify("textDocument/didClose", {"textDocument": {"uri": other}})
    # An edit far outside the document, to a document that is open.
    server.notify(
        "textDocument/didChange",
        {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [
                {
                    "range": {"start": {"line": 500, "character": 7}, "end": {"line": 900, "character": 1}},
                    "text": "\n",
                }
            ],
        },
    )
    server.open(uri, MODEL, version=3)  # opened twice: the newer text wins
    _still_right(server, uri)
    assert server.hover(other, SPEC.line, SPEC.character) is None
    assert server.errors_logged() == []


def test_a_burst_of_10000_changes(server: RawServer, tmp_path: Path) -> None:
    uri = _opened(server, tmp_path)
    end = len(MODEL.split("\n")) - 1
    frames = []
    for version in range(2, 10_002):
        change = {
            "range": {"start": {"line": end, "character": 0}, "end": {"line": end, "character": 0}},
            "text": "#",
        }
        message = {
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
        }
        body = json.dumps(message).encode()
        frames.append(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    server.send_bytes(b"".join(frames))

    text = server.hover(uri, SPEC.line, SPEC.character)

    assert text is not None and EXPECTED in text.replace("`", "")
    # The last line holds all 10,000 `#`: the edits were applied in order, none lost.
    hints = server.call(
        "textDocument/inlayHint",
        {
            "textDocument": _document(uri),
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": end + 1, "character": 0}},
        },
    )
    assert "error" not in hints
    _still_right(server, uri)


def test_concurrent_requests_with_cancellation(server: RawServer, tmp_path: Path) -> None:
    uri = _opened(server, tmp_path)
    params = {"textDocument": _document(uri), "position": {"line": SPEC.line, "character": SPEC.character}}
    numbers = [server.request("textDocument/hover", params) for _ in range(200)]
    for number in numbers[::2]:
        server.notify("$/cancelRequest", {"id": number})
    server.notify("$/cancelRequest", {"id": 123456789})  # nothing to cancel
    server.notify("$/cancelRequest", {"id": None})

    answers = [server.response(number) for number in numbers]

    for answer in answers:
        if "error" in answer:
            assert answer["error"]["code"] == -32800, answer  # RequestCancelled
        else:
            assert EXPECTED in answer["result"]["contents"]["value"].replace("`", "")
    assert all("error" not in answer for answer in answers[1::2])
    _still_right(server, uri)


def test_shutdown_in_the_middle_of_work(tmp_path: Path) -> None:
    server = RawServer(tmp_path / "server.log")
    server.initialize(tmp_path)
    uri = (tmp_path / "model.py").as_uri()
    server.open(uri, MODEL * 40)
    params = {"textDocument": _document(uri), "position": {"line": SPEC.line, "character": SPEC.character}}
    pending = [server.request("textDocument/hover", params) for _ in range(50)]

    shutdown = server.call("shutdown", None)
    after = server.call("textDocument/hover", params)
    server.notify("exit")
    code = server.process.wait(timeout=HANG)

    assert shutdown.get("result", "missing") is None
    assert "error" in after  # requests after shutdown are refused (InvalidRequest)
    assert code == 0
    answered = [server.response(number, timeout=1) for number in pending if server.has_response(number)]
    assert all("result" in a or "error" in a for a in answered)
    server.close()


@pytest.mark.parametrize(
    "shutdown, status", [(True, 0), (False, 1)], ids=["after shutdown", "without shutdown"]
)
def test_exit_ends_the_process_with_the_status_the_spec_asks(
    tmp_path: Path, shutdown: bool, status: int
) -> None:
    """LSP: `exit` ends the server with 0 if `shutdown` was received before, 1 otherwise."""
    server = RawServer(tmp_path / "server.log")
    server.initialize(tmp_path)
    if shutdown:
        assert server.call("shutdown")["result"] is None

    server.notify("exit")

    assert server.process.wait(timeout=HANG) == status
    assert server.close() == status


@pytest.mark.parametrize("distinct", [False, True], ids=["the same 10 documents", "1,000 distinct documents"])
def test_memory_stays_flat_over_1000_documents(server: RawServer, tmp_path: Path, distinct: bool) -> None:
    """Opening, hovering and closing keeps nothing per cycle. Distinct documents add entries to
    the bounded caches (20,000 segment parses, 65,536 layouts), hence the larger slack there."""

    def cycle(number: int) -> None:
        name = number if distinct else number % 10
        uri = (tmp_path / f"doc_{name}.py").as_uri()
        server.open(uri, MODEL.replace("x =", f"x_{name} ="))
        text = server.hover(uri, SPEC.line, SPEC.character)
        assert text is not None and EXPECTED in text.replace("`", "")
        server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    for number in range(200):  # warm-up: the allocator and the caches of the same texts settle
        cycle(number)
    before = server.rss()
    for number in range(200, 1200):
        cycle(number)
    after = server.rss()

    slack = MEMORY_SLACK if distinct else MEMORY_SLACK // 5
    print(f"VmRSS after 200 documents: {before / 2**20:.1f} MiB; after 1,000 more: {after / 2**20:.1f} MiB")
    assert after - before < slack, f"grew {(after - before) / 2**20:.1f} MiB"
