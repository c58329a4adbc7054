"""`shardls serve`: the language server, over stdio (what editors start) or TCP (for debugging).

shardls serve
shardls serve --tcp 127.0.0.1:2087 --log-file /tmp/shardls.log --log-level debug

stdout belongs to the protocol: logs go to --log-file, else stderr, and anything else that
writes to `sys.stdout` is sent to stderr too, so a stray print cannot corrupt a message.
"""

from __future__ import annotations

import argparse
import gc
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from shardls.cli.command import EXIT_OK, Subparsers, UsageError, option_type
from shardls.meshtext import parse_int

if TYPE_CHECKING:
    from shardls.server.server import ShardServer

NAME = "serve"

LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT`, e.g. `127.0.0.1:2087`."""
    host, colon, port = text.rpartition(":")
    if not colon or not host:
        raise ValueError(f"expected HOST:PORT, such as 127.0.0.1:2087, got {text!r}")
    number = parse_int(port, "the port")
    if not 0 < number < 65536:
        raise ValueError(f"the port must be between 1 and 65535, got {number}")
    return host, number


def add_parser(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        NAME,
        help="run the language server (LSP over stdio)",
        description="Serve hovers, diagnostics, inlay hints, completion and quick fixes to an editor.",
    )
    parser.add_argument(
        "--tcp", type=option_type(parse_address), metavar="HOST:PORT", help="listen on TCP instead of stdio"
    )
    parser.add_argument("--log-file", type=Path, metavar="PATH", help="write the log here (default: stderr)")
    parser.add_argument("--log-level", choices=LOG_LEVELS, default="warning", help="default: warning")


def run(args: argparse.Namespace) -> int:
    try:
        handler: logging.Handler = (
            logging.FileHandler(args.log_file, encoding="utf-8")
            if args.log_file
            else logging.StreamHandler(sys.stderr)
        )
    except OSError as error:
        raise UsageError(f"cannot write the log file {args.log_file}: {error.strerror or error}") from None
    logging.basicConfig(level=args.log_level.upper(), format=LOG_FORMAT, handlers=[handler], force=True)
    server = _created_server()
    from shardls.server.transport import serve_stdio  # pygls is loaded by now

    if args.tcp is not None:
        server.start_tcp(*args.tcp)
        return EXIT_OK
    protocol_out = sys.stdout.buffer
    sys.stdout = sys.stderr
    return serve_stdio(server, sys.stdin.buffer, protocol_out)  # 1 after `exit` without `shutdown`


def _created_server() -> ShardServer:
    """The server, made without garbage collection. Start-up allocates a few hundred thousand
    objects that live as long as the server (lsprotocol's types above all): collecting them is
    wasted time before the editor's first answer, and frozen afterwards they are never scanned
    again. The price: start-up's own cyclic garbage (~3 MiB) is frozen too; one collection to
    free it costs ~50 ms, a sixth of the start."""
    gc.disable()
    try:
        # Imported here: the other commands should not pay for pygls.
        from shardls.server.server import create_server

        return create_server()
    finally:
        gc.freeze()
        gc.enable()
