"""The stdio framing (shardls/server/transport.py) on byte streams, however they are split.

The same behaviours through the real server process are in test_lsp_abuse.py.
"""

from __future__ import annotations

from robust_helpers import peak_allocation

from shardls.server.transport import MAX_CONTENT_LENGTH, MAX_HEADER_LINE, Event, FrameReader, Skipped


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


SKIPPED = "skipped"

PIECES: list[tuple[bytes, list[bytes | str]]] = [
    (frame(b'{"a": 1}'), [b'{"a": 1}']),
    (b"Content-Length: abc\r\n\r\n{}", [SKIPPED]),
    (b"Content-Length: -5\r\n\r\n{}", [SKIPPED]),
    (b"Content-Length: 2 2\r\n\r\n{}", [SKIPPED]),
    (b"Content-Type: application/json\r\n\r\n{}", [SKIPPED]),  # no Content-Length
    (b"Garbage\r\nX-Other: 1\r\n", [SKIPPED]),
    (b'{"jsonrpc": "2.0"}\r\n', [SKIPPED]),  # a body where a header belongs
    (b": no name\r\n\r\n", [SKIPPED]),
    (b"Content-Length: %d\r\n\r\n" % (MAX_CONTENT_LENGTH + 1), [SKIPPED]),  # refused, never awaited
    (b"Content-Length: " + b"9" * 10_000 + b"\r\n\r\n", [SKIPPED]),
    (b"x" * (MAX_HEADER_LINE + 10), [SKIPPED]),  # a header line without an end
    (b"Content-Length: 2\r\n\r\n{}}}", [b"{}", SKIPPED]),  # a body longer than declared
    (b"\r\n\r\n\n", []),  # blank lines between messages
    (b"content-LENGTH:3\r\nContent-Type: x; charset=utf-8\r\n\r\nabc", [b"abc"]),
    (b"Content-Length: 2\n\n{}", [b"{}"]),  # lines ended by LF alone
    (b"Content-Length: 0\r\n\r\n", [b""]),
    (frame(b"Content-Length: 5\r\n\r\nhello"), [b"Content-Length: 5\r\n\r\nhello"]),  # a body is opaque
    (frame("é\u2028\x00".encode()), ["é\u2028\x00".encode()]),
]
"""Each piece, what reading it gives, and after each a valid frame the reader must find."""


def _stream() -> tuple[bytes, list[bytes | str]]:
    data = b""
    expected: list[bytes | str] = []
    for number, (piece, events) in enumerate(PIECES):
        after = b'{"after": %d}' % number
        data += piece + frame(after)
        expected += [*events, after]
    return data, expected


STREAM, EXPECTED = _stream()


def _shown(events: list[Event]) -> list[bytes | str]:
    return [SKIPPED if isinstance(event, Skipped) else event for event in events]


def test_the_stream_read_whole() -> None:
    reader = FrameReader()

    events = reader.feed(STREAM)

    assert _shown(events) == EXPECTED
    assert not reader.pending
    assert all(event.reason for event in events if isinstance(event, Skipped))


def test_one_byte_at_a_time() -> None:
    whole = FrameReader().feed(STREAM)
    reader = FrameReader()

    events = [event for index in range(len(STREAM)) for event in reader.feed(STREAM[index : index + 1])]

    assert events == whole
    assert not reader.pending


def test_split_in_two_at_every_boundary() -> None:
    whole = FrameReader().feed(STREAM)
    for cut in range(len(STREAM) + 1):
        reader = FrameReader()
        assert reader.feed(STREAM[:cut]) + reader.feed(STREAM[cut:]) == whole, cut


def test_a_message_cut_short_is_pending() -> None:
    for partial in (b"Content-Length: 10\r\n", b"Content-Length: 10\r\n\r\n{}", b"Content-Len"):
        reader = FrameReader()
        assert reader.feed(partial) == []
        assert reader.pending


def test_a_huge_declared_length_is_not_awaited_nor_buffered() -> None:
    """Refused at once; then a stream of garbage with no header keeps only a few bytes."""
    reader = FrameReader()
    assert reader.feed(b"Content-Length: 999999999999\r\n\r\n") == [
        Skipped(f"Content-Length 999999999999 is over {MAX_CONTENT_LENGTH}")
    ]
    garbage = b"\x00" * 65536

    peak = peak_allocation(lambda: [reader.feed(garbage) for _ in range(100)])  # 6.4 MB in all

    assert peak < 2**20
    assert reader.feed(frame(b"{}")) == [b"{}"]
