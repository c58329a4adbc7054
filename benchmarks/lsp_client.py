"""A stdlib-only LSP client for `bench_server.py`: a server as a subprocess over stdio, JSON-RPC
framed by hand, so that nothing between the stopwatch and the server's pipe (pygls on the client
side, asyncio scheduling) is measured; every time is taken when the reader thread has the whole
message in hand. Also the server's CPU time and peak memory, read from /proc."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import unquote

WAIT_S = 180.0
"""Longest wait for one answer; pyright on a 20k-line file can take tens of seconds."""

CAPABILITIES: dict[str, Any] = {
    "workspace": {"configuration": True, "workspaceFolders": True},
    "textDocument": {
        "synchronization": {"didSave": True},
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "publishDiagnostics": {"relatedInformation": True, "versionSupport": True},
    },
    "window": {"workDoneProgress": False},
}
"""An editor's essentials, without pull diagnostics (every server here pushes then) and without
dynamic registration (nothing to answer but workspace/configuration)."""


@dataclass
class Message:
    at: float
    """time.perf_counter() when the whole message had been read."""
    body: dict[str, Any]

    @property
    def method(self) -> str | None:
        return self.body.get("method")

    @property
    def params(self) -> Any:
        return self.body.get("params")


class Connection:
    """One server process and the messages it sent, read by a thread as they arrive.

    Requests from the server are answered at once (workspace/configuration with null per item:
    no settings, so every server runs on its defaults), so they cannot stall the measurement.
    """

    def __init__(self, command: list[str], cwd: Path, log: Path, env: dict[str, str] | None = None) -> None:
        self._log = log.open("wb")
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=None if env is None else {**os.environ, **env},
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self._stdin: BinaryIO = self.process.stdin
        self._stdout: BinaryIO = self.process.stdout
        self.messages: list[Message] = []
        self._arrived = threading.Condition()
        self._send_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._closed = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            length = None
            while (line := self._stdout.readline()) not in (b"\r\n", b"\n"):
                if not line:
                    with self._arrived:
                        self._closed = True
                        self._arrived.notify_all()
                    return
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            assert length is not None, "a message without Content-Length"
            body = json.loads(self._stdout.read(length))
            message = Message(time.perf_counter(), body)
            if "id" in body and "method" in body:
                self._answer(body)
            with self._arrived:
                self.messages.append(message)
                self._arrived.notify_all()

    def _answer(self, request: dict[str, Any]) -> None:
        result: Any = None
        if request["method"] == "workspace/configuration":
            result = [None for _ in request["params"]["items"]]
        self._send({"jsonrpc": "2.0", "id": request["id"], "result": result})

    def _send(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode("utf-8")
        with self._send_lock:
            self._stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
            self._stdin.flush()

    def notify(self, method: str, params: Any) -> float:
        """Send a notification; returns when it was handed to the pipe."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})
        return time.perf_counter()

    def request(self, method: str, params: Any) -> tuple[int, float]:
        """Send a request; returns its id and when it was handed to the pipe."""
        number = next(self._ids)
        sent = time.perf_counter()
        self._send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        return number, sent

    def mark(self) -> int:
        """Where the messages received so far end: `wait` looks at later ones only."""
        with self._arrived:
            return len(self.messages)

    def wait(self, wanted: Callable[[Message], bool], after: int = 0, timeout: float = WAIT_S) -> Message:
        deadline = time.perf_counter() + timeout
        with self._arrived:
            while True:
                for message in self.messages[after:]:
                    if wanted(message):
                        return message
                after = len(self.messages)
                left = deadline - time.perf_counter()
                if self._closed or left <= 0:
                    raise TimeoutError(
                        f"no such message within {timeout:.0f} s (server closed: {self._closed})"
                    )
                self._arrived.wait(left)

    def response(self, number: int, after: int = 0, timeout: float = WAIT_S) -> Message:
        message = self.wait(lambda m: m.body.get("id") == number and "method" not in m.body, after, timeout)
        if "error" in message.body:
            raise RuntimeError(f"request {number} failed: {message.body['error']}")
        return message

    def diagnostics(self, uri: str, after: int) -> Message:
        return self.wait(lambda m: is_publish(m, uri), after)

    def close(self) -> None:
        """shutdown + exit, as an editor does, then make sure the process is gone."""
        try:
            if self.process.poll() is None:
                number, _ = self.request("shutdown", None)
                self.response(number, timeout=10)
                self.notify("exit", None)
                self.process.wait(timeout=10)
        except (OSError, TimeoutError, RuntimeError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        finally:
            self._log.close()


def is_publish(message: Message, uri: str) -> bool:
    return message.method == "textDocument/publishDiagnostics" and same_uri(message.params["uri"], uri)


def latest_publish(connection: Connection, uri: str) -> Message:
    """The diagnostics last published for `uri` so far."""
    with connection._arrived:
        return next(m for m in reversed(connection.messages) if is_publish(m, uri))


def same_uri(a: str, b: str) -> bool:
    """Servers may echo a URI back with different percent-encoding than was sent."""
    return unquote(a) == unquote(b)


def peak_rss(pid: int) -> int:
    """Peak resident memory (VmHWM) of the process and its descendants, in bytes, from /proc.

    Read while the server is alive: the kernel forgets it at exit. Children are included
    because a server may work in helper processes (a language server's memory is all of them).
    """
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo.extend(children.get(current, []))
        try:
            status = Path(f"/proc/{current}/status").read_text()
        except OSError:
            continue
        match = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
        total += int(match.group(1)) * 1024 if match else 0
    return total


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, all threads) the process has used, from /proc/<pid>/stat.

    On a busy machine wall-clock times stretch with the load while CPU times barely move, so
    both are shown; the resolution is one clock tick (usually 10 ms).
    """
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


Published = tuple[int, str, int]
"""A published diagnostic: (0-based line, code, LSP severity: 1 error, 2 warning, 3 info, 4 hint)."""


def published(message: Message) -> list[Published]:
    return [
        (d["range"]["start"]["line"], str(d.get("code")), d.get("severity", 1))
        for d in message.params["diagnostics"]
    ]


def open_params(uri: str, text: str) -> dict[str, Any]:
    return {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}


def initialize(connection: Connection, folder: Path) -> tuple[float, float, dict[str, Any]]:
    """The `initialize` round trip from the process' spawn; returns it, the server's CPU time
    until then, and the capabilities."""
    number, _ = connection.request(
        "initialize",
        {
            "processId": os.getpid(),
            "clientInfo": {"name": "bench_server"},
            "rootUri": folder.as_uri(),
            "workspaceFolders": [{"uri": folder.as_uri(), "name": folder.name}],
            "capabilities": CAPABILITIES,
        },
    )
    answer = connection.response(number)
    cpu = cpu_seconds(connection.process.pid)
    connection.notify("initialized", {})
    return answer.at - connection.started, cpu, answer.body["result"]["capabilities"]


def hover(connection: Connection, uri: str, position: tuple[int, int]) -> tuple[float, bool]:
    """One hover round trip; returns its time and whether it had content."""
    after = connection.mark()
    number, sent = connection.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": {"line": position[0], "character": position[1]}},
    )
    answer = connection.response(number, after)
    return answer.at - sent, bool(answer.body.get("result"))


def edit_params(uri: str, version: int, line: int, start: int, end: int, new: str) -> dict[str, Any]:
    change = {
        "range": {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}},
        "text": new,
    }
    return {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}
