"""The times the robustness tests no longer assert, as ratios against a reference of the same run.

    .venv/bin/python benchmarks/bench_robustness.py

CI's tests bound work (the analyzer's step budgets) and hangs (120 s), never time, since a busy
machine stretches any time. Here, on whatever machine, each hostile input of
tests/robustness/test_adversarial_inputs.py and each file at the size bounds is analysed, and
its time divided by `ast.parse` of the same text (the floor any analysis pays); then a live
server takes 10,000 one-character `didChange` edits and answers a hover, against the same
server taking 10,000 notifications it ignores (the cost of the pipe and of reading JSON).

Targets (docs/security.md): each hostile input under 2 s; a file at the size bounds under
10 s; the burst of edits at most 5x the burst of ignored notifications.
"""

from __future__ import annotations

import ast
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "robustness"), str(ROOT / "tests" / "server")]

from lsp_helpers import MODEL, position_of  # noqa: E402
from raw_client import RawServer  # noqa: E402
from test_adversarial_inputs import AT_THE_BOUNDS, CYCLES, EXPRESSIONS, HEAD, OK_SITE  # noqa: E402

from shardls.analysis.analyzer import Analyzer  # noqa: E402


def seconds(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def analysis_ratios() -> None:
    inputs = {
        **{name: HEAD + body + OK_SITE for name, body in {**EXPRESSIONS, **CYCLES}.items()},
        **AT_THE_BOUNDS,
    }
    for name, text in inputs.items():
        parse = max(seconds(lambda text=text: ast.parse(text, "model.py")), 1e-6)
        analysis = seconds(lambda text=text: Analyzer().analyze("/virtual/model.py", text))
        target = 10.0 if name in AT_THE_BOUNDS else 2.0
        verdict = "ok" if analysis < target else "MISSED"
        print(f"{name[:40]:40} {analysis * 1e3:9.1f} ms = {analysis / parse:8.1f}x ast.parse  {verdict}")


def _burst(server: RawServer, uri: str, method: str, end: int) -> float:
    frames = []
    for version in range(2, 10_002):
        change = {
            "range": {"start": {"line": end, "character": 0}, "end": {"line": end, "character": 0}},
            "text": "#",
        }
        params = {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}
        body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode()
        frames.append(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    spec = position_of(MODEL, 'P(None, "model")')
    start = time.perf_counter()
    server.send_bytes(b"".join(frames))
    server.hover(uri, spec.line, spec.character)
    return time.perf_counter() - start


def server_ratio() -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        server = RawServer(root / "server.log")
        try:
            server.initialize(root)
            uri = (root / "model.py").as_uri()
            server.open(uri, MODEL)
            end = len(MODEL.split("\n")) - 1
            ignored = _burst(server, uri, "shardls/ignoredNotification", end)
            edits = _burst(server, uri, "textDocument/didChange", end)
        finally:
            server.close()
    verdict = "ok" if edits <= 5 * ignored else "MISSED"
    print(
        f"10,000 didChange then a hover: {edits:.2f} s = {edits / ignored:.1f}x 10,000 ignored notifications  {verdict}"
    )


if __name__ == "__main__":
    analysis_ratios()
    server_ratio()
