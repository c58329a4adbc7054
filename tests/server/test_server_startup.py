"""Starting the server: no jax/flax/numpy import, stdio and TCP transports, logs off stdout."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_helpers import HANG

from shardls import __version__
from shardls.cli.main import main
from shardls.cli.serve_cmd import parse_address


def test_the_server_starts_without_jax_flax_or_numpy() -> None:
    code = (
        "import sys; from shardls.cli import main; from shardls.server.server import create_server; "
        "create_server(); print([m for m in ('jax', 'flax', 'numpy') if m in sys.modules])"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=HANG
    )
    assert result.stdout == "[]\n"


def test_addresses() -> None:
    assert parse_address("127.0.0.1:2087") == ("127.0.0.1", 2087)
    assert parse_address("::1:2087") == ("::1", 2087)
    for bad in ("2087", ":2087", "host:port", "host:70000"):
        with pytest.raises(ValueError):
            parse_address(bad)


def test_bad_arguments_are_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["serve", "--tcp", "localhost"]) == 2
    assert "expected HOST:PORT" in capsys.readouterr().err
    assert main(["serve", "--log-file", str(tmp_path / "missing" / "server.log")]) == 2
    assert "cannot write the log file" in capsys.readouterr().err


def _message(payload: dict[str, object]) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def _read_message(reader: asyncio.StreamReader) -> dict[str, object]:
    headers = await reader.readuntil(b"\r\n\r\n")
    length = int(headers.split(b"Content-Length:")[1].split(b"\r\n")[0])
    answer: dict[str, object] = json.loads(await reader.readexactly(length))
    return answer


@pytest.mark.asyncio
async def test_tcp_with_a_log_file(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = tmp_path / "server.log"
    command = [
        "-m",
        "shardls",
        "serve",
        "--tcp",
        f"127.0.0.1:{port}",
        "--log-file",
        str(log),
        "--log-level",
        "info",
    ]
    server = await asyncio.create_subprocess_exec(
        sys.executable, *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        deadline = asyncio.get_running_loop().time() + HANG  # a busy machine starts Python slowly
        while True:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                if asyncio.get_running_loop().time() > deadline or server.returncode is not None:
                    raise
                await asyncio.sleep(0.05)
        writer.write(
            _message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
        )
        answer = await asyncio.wait_for(_read_message(reader), HANG)
        writer.write(_message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        writer.write(_message({"jsonrpc": "2.0", "method": "exit"}))
        await writer.drain()
        out, err = await asyncio.wait_for(server.communicate(), HANG)
    finally:
        if server.returncode is None:
            server.kill()
    result = answer["result"]
    assert isinstance(result, dict) and result["serverInfo"] == {"name": "shardls", "version": __version__}
    assert out == b"" and err == b""
    assert f"Starting TCP server on 127.0.0.1:{port}" in log.read_text()
