"""A small JSON-RPC client over a real `python -m shardls serve` process's stdio, able to send
anything: malformed frames, wrong types, floods. Responses are collected by a reader thread.

Every wait defaults to HANG: a missing answer fails the test only once the server must have
hung, never because a busy machine made it slow."""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from lsp_helpers import HANG

SERVE = [sys.executable, "-I", "-m", "shardls", "serve"]


class RawServer:
    def __init__(self, log: Path, log_level: str = "warning") -> None:
        self._log = log.open("wb")
        self.process = subprocess.Popen(
            [*SERVE, "--log-level", log_level],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
        )
        self._ids = itertools.count(1)
        self._responses: dict[object, dict[str, Any]] = {}
        self.notifications: list[dict[str, Any]] = []
        self.unparsable: list[bytes] = []
        self._arrived = threading.Condition()
        self._requests_from_server: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # -- sending ------------------------------------------------------------------------------

    def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send_body(self, body: bytes) -> None:
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def send(self, message: object) -> None:
        self.send_body(json.dumps(message).encode())

    def notify(self, method: str, params: object = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: object = None) -> int:
        number = next(self._ids)
        self.send({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        return number

    def call(self, method: str, params: object = None, timeout: float = HANG) -> dict[str, Any]:
        return self.response(self.request(method, params), timeout)

    # -- receiving ----------------------------------------------------------------------------

    def response(self, number: object, timeout: float = HANG) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while number not in self._responses:
                left = deadline - time.monotonic()
                if left <= 0 or self.process.poll() is not None:
                    raise AssertionError(
                        f"no response to request {number} (server exit: {self.process.poll()})"
                    )
                self._arrived.wait(left)
            return self._responses.pop(number)

    def has_response(self, number: object) -> bool:
        """Whether an answer to `number` arrived and was not taken yet."""
        with self._arrived:
            return number in self._responses

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = None
            while True:
                header = stream.readline()
                if not header:
                    return
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":")[1])
                if header in (b"\r\n", b"\n"):
                    break
            body = stream.read(length or 0)
            try:
                message = json.loads(body)
            except ValueError:
                self.unparsable.append(body)
                continue
            with self._arrived:
                if "id" in message and "method" in message:
                    self._requests_from_server.put(message)
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                elif "id" in message:
                    self._responses[message["id"]] = message
                else:
                    self.notifications.append(message)
                self._arrived.notify_all()

    # -- the session ----------------------------------------------------------------------------

    def initialize(self, root: Path, timeout: float = HANG) -> dict[str, Any]:
        result = self.call(
            "initialize",
            {
                "processId": None,
                "rootUri": root.as_uri(),
                "capabilities": {"textDocument": {"hover": {"contentFormat": ["markdown"]}}},
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            },
            timeout,
        )
        self.notify("initialized", {})
        return result

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": text}},
        )

    def open_notebook(self, notebook: str, cell: str, text: str) -> None:
        """Open a Jupyter notebook of one code cell (`cell` is that cell's document URI)."""
        self.notify(
            "notebookDocument/didOpen",
            {
                "notebookDocument": {
                    "uri": notebook,
                    "notebookType": "jupyter-notebook",
                    "version": 1,
                    "cells": [{"kind": 2, "document": cell}],
                },
                "cellTextDocuments": [{"uri": cell, "languageId": "python", "version": 1, "text": text}],
            },
        )

    def hover(self, uri: str, line: int, character: int, timeout: float = HANG) -> str | None:
        answer = self.call(
            "textDocument/hover",
            {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}},
            timeout,
        )
        assert "error" not in answer, answer
        result = answer["result"]
        return None if result is None else str(result["contents"]["value"])

    def rss(self) -> int:
        """The server's resident memory in bytes (VmRSS)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS")

    def errors_logged(self) -> list[str]:
        """window/logMessage and window/showMessage errors: a handler failed (the guard answered
        empty), or pygls caught an exception."""
        with self._arrived:
            return [
                n["params"]["message"]
                for n in self.notifications
                if n.get("method") in ("window/logMessage", "window/showMessage")
                and n["params"].get("type") == 1
            ]

    def drain_errors(self) -> list[str]:
        """errors_logged(), and forget every notification so far (a long run keeps none)."""
        with self._arrived:
            errors = self.errors_logged()
            self.notifications.clear()
        return errors

    def close(self) -> int:
        """Shut the server down (shutdown, then exit) if it runs; its exit status."""
        if self.process.poll() is None:
            try:
                self.call("shutdown", None)
                self.notify("exit")
                self.process.wait(timeout=HANG)
            except (AssertionError, OSError, subprocess.TimeoutExpired):
                self.process.kill()
        self._log.close()
        return self.process.wait()
