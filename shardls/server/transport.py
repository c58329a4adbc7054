"""The stdio transport: shardls's own reader of LSP frames, in place of pygls's.

Why it exists: pygls's reader (`pygls.io_.run_async`) stops for good at the first frame whose
header it cannot parse (`Content-Length: abc`, a negative or missing length, lines ended by LF
alone): the body runs into the next header and no header is found again, so the server stays up
but answers nothing more. It also lets `exit` end the process with status 0 whether or not
`shutdown` came first. This reader

- skips a malformed header block, logs it, and resynchronises at the next `Content-Length:`;
- refuses a Content-Length above `MAX_CONTENT_LENGTH` without allocating it (and resyncs);
- answers a body that is not JSON with `-32700 Parse error` and a JSON value that is not a
  request, notification or response with `-32600 Invalid Request` (JSON-RPC 2.0, `id: null`
  when the message has no usable id), then goes on;
- ends cleanly at the end of the input, and returns the status `exit` asked for (0 after
  `shutdown`, else 1, as the LSP specification says).

Framing (`FrameReader`) is separate from I/O so that it can be tested on any split of a stream.
Everything after framing is pygls's: `structure_message` and `handle_message` of the protocol;
an exception either raises (a bug, e.g. pygls's `$/cancelRequest` of an id `{}`) is logged in
one line and answered, if the message was a request, with Internal Error: no message ends the
server.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.io_ import StdoutWriter
from pygls.server import JsonRPCServer

MAX_CONTENT_LENGTH = 64 * 2**20
"""Bytes one message may have (64 MiB: a 1,000,000-character file, the analysis' own bound, is
at most 4 MB of UTF-8, 24 MB with JSON escapes). A larger Content-Length is refused unread."""
MAX_HEADER_LINE = 8192
"""Bytes one header line may have; longer, it is garbage (LSP has two short headers)."""
CHUNK = 65536
"""Bytes asked of the input per read."""

logger = logging.getLogger("shardls.server")

_CONTENT_LENGTH = re.compile(rb"content-length:", re.IGNORECASE)
_HEADER_NAME = re.compile(rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+(?=:)")
"""A header's name: an HTTP token followed by a colon (so a stray JSON body is not a header)."""
_TAIL = len(b"content-length:") - 1
"""Bytes kept while resynchronising: a `Content-Length:` split between two reads is still found."""


@dataclass(frozen=True)
class Skipped:
    """Bytes that were not a well-formed frame, and why; reading resumes at the next header."""

    reason: str


Event = bytes | Skipped
"""What `FrameReader.feed` yields: a message body, or a skipped malformed frame."""


class FrameReader:
    """Splits a byte stream into LSP message bodies (`Content-Length: n`, blank line, n bytes).

    Incremental: `feed` takes bytes however they were split and returns the events completed so
    far. Header names are case-insensitive, lines may end in CRLF or LF, other headers
    (`Content-Type`) are ignored and blank lines between messages are allowed.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._length: int | None = None  # of the block's Content-Length header
        self._in_block = False  # a header line of the current block was read
        self._body: int | None = None  # bytes of the body being read
        self._resyncing = False

    @property
    def pending(self) -> bool:
        """Whether a message was begun and not finished (at the end of the input)."""
        return self._in_block or self._body is not None or bool(self._buffer.strip())

    def feed(self, data: bytes) -> list[Event]:
        self._buffer += data
        events: list[Event] = []
        while self._step(events):
            pass
        return events

    def _step(self, events: list[Event]) -> bool:
        """Take one body, header line or resync from the buffer; False when it needs more bytes."""
        buffer = self._buffer
        if self._body is not None:
            if len(buffer) < self._body:
                return False
            events.append(bytes(buffer[: self._body]))
            del buffer[: self._body]
            self._body = None
            return True
        if self._resyncing:
            found = _CONTENT_LENGTH.search(buffer)
            if found is None:
                del buffer[:-_TAIL]
                return False
            del buffer[: found.start()]
            self._resyncing = False
            return True
        end = buffer.find(b"\n", 0, MAX_HEADER_LINE + 1)
        if end < 0:
            if len(buffer) > MAX_HEADER_LINE:
                return self._skip(events, f"a header line longer than {MAX_HEADER_LINE} bytes")
            return False
        line = bytes(buffer[:end]).removesuffix(b"\r")
        if not line:
            del buffer[: end + 1]
            if not self._in_block:
                return True  # a blank line between messages
            length, self._length, self._in_block = self._length, None, False
            if length is None:
                return self._skip(events, "a header block without Content-Length", drop=0)
            self._body = length
            return True
        name = _HEADER_NAME.match(line)
        if name is None:
            return self._skip(events, f"not a header line: {line[:80]!r}")
        if name.group().lower() == b"content-length":
            value = line[name.end() + 1 :].strip()
            if not value.isdigit():
                return self._skip(events, f"Content-Length {value[:40]!r} is not a number of bytes")
            if len(value) > 12 or int(value) > MAX_CONTENT_LENGTH:
                return self._skip(
                    events, f"Content-Length {value[:40].decode()} is over {MAX_CONTENT_LENGTH}"
                )
            self._length = int(value)
        self._in_block = True
        del buffer[: end + 1]
        return True

    def _skip(self, events: list[Event], reason: str, drop: int = 1) -> bool:
        """Drop the block read so far and the first byte of the bad line, then look for the next
        `Content-Length:` (it may be later on that line: an undelimited body runs into it)."""
        del self._buffer[:drop]
        self._length, self._in_block, self._resyncing = None, False, True
        events.append(Skipped(reason))
        return True


def _is_id(value: object) -> bool:
    return isinstance(value, int | str) and not isinstance(value, bool)


def invalid_message(data: object) -> str | None:
    """Why a parsed JSON value is not a JSON-RPC 2.0 request, notification or response (None: it is)."""
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not an object (LSP has no batches)"
    if data.get("jsonrpc") != "2.0":
        return 'no "jsonrpc": "2.0" member'
    if "method" in data:
        if not isinstance(data["method"], str):
            return '"method" is not a string'
        if "id" in data and not _is_id(data["id"]):
            return '"id" is not a number or a string'
        return None
    if "id" not in data or ("result" in data) == ("error" in data):
        return "neither a request, a notification nor a response"
    return None


def _answer_error(server: JsonRPCServer, data: object, code: int, message: str) -> None:
    """An error response with the message's id when it has a usable one, else `id: null`
    (pygls's own response type would leave `id` out, which JSON-RPC 2.0 does not allow)."""
    msg_id = data.get("id") if isinstance(data, dict) and _is_id(data.get("id")) else None
    server.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def dispatch(server: JsonRPCServer, body: bytes) -> None:
    """Parse and check one body, then hand it to pygls; malformed ones are answered with an error."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        logger.warning("A message is not JSON (%s): answered Parse error", error)
        _answer_error(server, None, JsonRpcParseError.CODE, f"Parse error: {error}")
        return
    problem = invalid_message(data)
    if problem is not None:
        logger.warning("A message is not JSON-RPC (%s): answered Invalid Request", problem)
        _answer_error(server, data, JsonRpcInvalidRequest.CODE, f"Invalid Request: {problem}")
        return
    try:
        message = server.protocol.structure_message(data)
    except JsonRpcException as error:  # wrong params: a request among them was answered (server.py)
        logger.warning("Cannot read a %r message: %s", data.get("method", "response"), error)
        return
    try:
        server.protocol.handle_message(message)
    except Exception as error:  # a bug in pygls or shardls: it costs this message, not the server
        logger.error("Failed to handle a %r message: %s: %s", data.get("method"), type(error).__name__, error)
        logger.debug("The failure of that message", exc_info=error)
        if "method" in data and _is_id(data.get("id")):
            _answer_error(server, data, JsonRpcInternalError.CODE, f"Internal error: {error}")


async def _read_messages(server: JsonRPCServer, read: Callable[[int], bytes]) -> None:
    loop = asyncio.get_running_loop()
    frames = FrameReader()
    while data := await loop.run_in_executor(None, read, CHUNK):
        for event in frames.feed(data):
            if isinstance(event, Skipped):
                logger.warning("Skipped a malformed frame: %s", event.reason)
            else:
                dispatch(server, event)
    if frames.pending:
        logger.warning("The input ended in the middle of a message")


def serve_stdio(server: JsonRPCServer, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve until `exit` or the end of the input; the process's exit status.

    `exit` ends with 0 after `shutdown` and 1 without (pygls raises SystemExit with that code);
    the end of the input ends with 0.
    """
    read: Callable[[int], Any] = getattr(stdin, "read1", stdin.read)
    server.protocol.set_writer(StdoutWriter(stdout))
    try:
        asyncio.run(_read_messages(server, read))
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
    except BrokenPipeError:
        logger.error("The client closed the connection; shutting down")
        return 1
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]  # pygls: stops its thread pool
    return 0
