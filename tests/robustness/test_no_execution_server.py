"""The language server runs no user code either: a workspace whose every file would leave a
marker file and open a socket if imported or run (package `__init__.py`, `conftest.py`,
`setup.py`, a notebook, modules importing them) is opened, hovered, hinted and diagnosed end to
end through `python -m shardls serve`, and afterwards no marker exists and no connection came.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from raw_client import RawServer
from robust_helpers import HANG

TRAP = """
import os, socket
open(os.path.join({root!r}, "MARKER-{name}"), "w").write("ran")
for port in (9, {port}):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
    except OSError:
        pass
"""

MODEL = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
from .config import D_MODEL
import pkg.helpers as helpers
__import__("os").system("touch {root}/MARKER-system")
exec("open('{root}/MARKER-exec', 'w')")
eval("open('{root}/MARKER-eval', 'w')")
mesh = jax.make_mesh((2, 4), ("data", "model"))
x = jax.device_put(jnp.zeros((D_MODEL, helpers.WIDTH)), NamedSharding(mesh, P("data", "model")))
"""
"""Line 9: float32[1024,64] over data=2, model=4: per device [512,16] (from imported constants)."""


class Listener:
    """A TCP socket on 127.0.0.1 that records every connection made to it."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.socket.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


def _trap(root: Path, name: str, port: int) -> str:
    return TRAP.format(root=str(root), name=name, port=port)


def _workspace(root: Path, port: int) -> dict[str, str]:
    files = {
        "pkg/__init__.py": _trap(root, "init", port),
        "pkg/config.py": _trap(root, "config", port) + "D_MODEL = 1024\n",
        "pkg/helpers.py": _trap(root, "helpers", port) + "WIDTH = 64\n",
        "pkg/model.py": MODEL.format(root=str(root)),
        "conftest.py": _trap(root, "conftest", port),
        "setup.py": _trap(root, "setup", port) + "from setuptools import setup\nsetup(name='evil')\n",
        "sitecustomize.py": _trap(root, "sitecustomize", port),
        "shardls_plugin.py": _trap(root, "plugin", port),
    }
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "evil"\nentry-points = {shardls = {x = "shardls_plugin:x"}}\n[tool.shardls]\ndevice-count = 8\n'
    )
    return files


def _markers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("MARKER-*"))


def _everything(server: RawServer, uri: str, text: str) -> None:
    """Every request the server answers, at every line of the text."""
    lines = text.split("\n")
    document = {"uri": uri}
    for line, content in enumerate(lines):
        for character in range(0, len(content) + 1, 7):
            position = {"line": line, "character": character}
            server.call("textDocument/hover", {"textDocument": document, "position": position})
            server.call("textDocument/definition", {"textDocument": document, "position": position})
        position = {"line": line, "character": len(content)}
        server.call("textDocument/completion", {"textDocument": document, "position": position})
        whole = {"start": {"line": line, "character": 0}, "end": {"line": line, "character": len(content)}}
        server.call(
            "textDocument/codeAction",
            {"textDocument": document, "range": whole, "context": {"diagnostics": []}},
        )
    everything = {"start": {"line": 0, "character": 0}, "end": {"line": len(lines), "character": 0}}
    server.call("textDocument/inlayHint", {"textDocument": document, "range": everything})
    server.call("textDocument/codeLens", {"textDocument": document})
    server.call("textDocument/diagnostic", {"textDocument": document})


def test_the_server_runs_nothing(tmp_path: Path, listener: Listener) -> None:
    files = _workspace(tmp_path, listener.port)
    server = RawServer(tmp_path.parent / f"{tmp_path.name}-server.log")
    try:
        server.initialize(tmp_path)
        for relative, text in files.items():
            uri = (tmp_path / relative).as_uri()
            server.open(uri, text)
            _everything(server, uri, text)
        notebook = (tmp_path / "nb.ipynb").as_uri()
        cell = notebook + "#cell1"
        code = _trap(tmp_path, "notebook", listener.port) + "%time x = 1\n!touch MARKER-shell\n"
        server.open_notebook(notebook, cell, code)
        _everything(server, cell, code)

        model = (tmp_path / "pkg" / "model.py").as_uri()
        text = server.hover(model, 9, MODEL.index('P("data"'))
        diagnostics = [
            n for n in server.notifications if n.get("method") == "textDocument/publishDiagnostics"
        ]
        assert server.errors_logged() == []
    finally:
        server.close()

    assert text is not None and "per device float32[512,16]" in text.replace("`", "")
    assert diagnostics  # the files were analysed, not just received
    assert _markers(tmp_path) == []
    assert listener.connections == 0


def test_the_traps_do_fire_when_run(tmp_path: Path, listener: Listener) -> None:
    """The test above means something only if running a trap does leave its marker and connect."""
    _workspace(tmp_path, listener.port)
    code = _trap(tmp_path, "notebook", listener.port)
    (tmp_path / "nb.ipynb").write_text(
        json.dumps(
            {
                "cells": [{"cell_type": "code", "metadata": {}, "source": code, "outputs": []}],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )

    subprocess.run([sys.executable, str(tmp_path / "conftest.py")], timeout=HANG, check=True)
    cell = json.loads((tmp_path / "nb.ipynb").read_text())["cells"][0]["source"]
    subprocess.run([sys.executable, "-c", cell], timeout=HANG, check=True)

    assert _markers(tmp_path) == ["MARKER-conftest", "MARKER-notebook"]
    deadline = time.monotonic() + HANG  # the connections may lag the processes' exit
    while listener.connections < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert listener.connections == 2
