"""Fuzzing one live `shardls serve` process: each input becomes the text of one open document,
then hovers at random positions, inlay hints, pulled diagnostics, a code action on one of them
(its quick fixes) and a completion are asked. Shared by tests/robustness/test_fuzz.py (a
CI-sized run) and benchmarks/fuzz_long.py (a long run).

A failure is an error answer, a handler failure the server reported (window/logMessage or
window/showMessage of type Error), no answer within HANG (the server hung or died; it is then
restarted so that the run goes on), or, when the fuzzer is given a `slow` bound (the long run
of benchmarks/fuzz_long.py on a quiet machine; never CI), a request slower than that.
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path
from typing import Any

from raw_client import RawServer
from robust_helpers import HANG

_TRACEBACK = re.compile(r"^Traceback .*?^(\S[^\n]*)$", re.MULTILINE | re.DOTALL)
"""A traceback in a log, and its exception line (the first line after it that is not indented)."""
REQUESTS_PER_INPUT = 7


class ServerFailure(Exception):
    """The server failed on an input; the message says how."""


_SITE = re.compile(r"P\(|shard|mesh|nnx\.|zeros|Param")
"""Lines worth a hover: likely sites, meshes and parameters."""


def positions(text: str, rng: random.Random, count: int) -> list[dict[str, int]]:
    """Random positions in the text, half of them on lines that look like sites; some past the
    end of a line or of the document."""
    lines = text.split("\n")
    sites = [number for number, line in enumerate(lines) if _SITE.search(line)]
    found = []
    for _ in range(count):
        line = rng.choice(sites) if sites and rng.random() < 0.5 else rng.randrange(len(lines) + 2)
        width = len(lines[line]) if line < len(lines) else 0
        found.append({"line": line, "character": rng.randrange(width + 3)})
    return found


class ServerFuzzer:
    """One server process and one document in it (`fuzz.py` in `root`), fed input after input."""

    def __init__(self, root: Path, slow: float | None = None) -> None:
        """`slow`: seconds above which an answer is a failure (None: only a hang is)."""
        self.root = root
        self.slow = slow
        self.uri = (root / "fuzz.py").as_uri()
        self.inputs = 0
        self.requests = 0
        self.restarts = 0
        self.latencies: list[float] = []
        self.server = self._start()

    def _start(self) -> RawServer:
        server = RawServer(self.root / f"server-{self.restarts}.log")
        server.initialize(self.root, timeout=HANG)
        self._version = 1
        server.open(self.uri, "")
        return server

    def feed(self, text: str, rng: random.Random) -> None:
        """Send the text as the document's new content and ask about it; ServerFailure if the
        server fails (a server that hung or died is replaced by a new one)."""
        self.inputs += 1
        try:
            self._feed(text, rng)
        except (AssertionError, OSError) as error:  # no answer (hung or dead), or a closed pipe
            self.restart()
            raise ServerFailure(f"the server stopped answering: {error}") from None
        errors = self.server.drain_errors()
        if errors:
            raise ServerFailure(f"the server reported a failure: {errors[0]}")

    def _feed(self, text: str, rng: random.Random) -> None:
        self._version += 1
        self.server.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": self.uri, "version": self._version}, "contentChanges": [{"text": text}]},
        )
        document = {"uri": self.uri}
        for position in positions(text, rng, 3):
            self._ask("textDocument/hover", {"textDocument": document, "position": position})
        everything = {
            "start": {"line": 0, "character": 0},
            "end": {"line": text.count("\n") + 1, "character": 0},
        }
        self._ask("textDocument/inlayHint", {"textDocument": document, "range": everything})
        report = self._ask("textDocument/diagnostic", {"textDocument": document})
        items = report["items"] if isinstance(report, dict) else []
        if items:
            chosen = rng.choice(items)
            where, context = chosen["range"], {"diagnostics": [chosen]}
        else:
            point = positions(text, rng, 1)[0]
            where, context = {"start": point, "end": point}, {"diagnostics": []}
        self._ask("textDocument/codeAction", {"textDocument": document, "range": where, "context": context})
        self._ask(
            "textDocument/completion", {"textDocument": document, "position": positions(text, rng, 1)[0]}
        )

    def _ask(self, method: str, params: dict[str, Any]) -> Any:
        start = time.perf_counter()
        answer = self.server.call(method, params, timeout=HANG)
        seconds = time.perf_counter() - start
        self.requests += 1
        self.latencies.append(seconds)
        if "error" in answer:
            raise ServerFailure(f"{method} answered an error: {answer['error']}")
        if self.slow is not None and seconds >= self.slow:
            raise ServerFailure(f"{method} took {seconds:.2f} s (bound {self.slow} s)")
        return answer["result"]

    def restart(self) -> None:
        self.server.process.kill()
        self.server.close()
        self.restarts += 1
        self.server = self._start()

    def close(self) -> list[str]:
        """Shut the server down; the problems seen at the end (an exit status other than 0, a
        traceback in its log), if any."""
        code = self.server.close()
        problems = [f"exit status {code} after shutdown and exit"] if code != 0 else []
        for log in sorted(self.root.glob("server-*.log")):
            for exception in _TRACEBACK.findall(log.read_text(errors="replace")):
                problems.append(f"a traceback in the server's log: {exception}")
        return problems
