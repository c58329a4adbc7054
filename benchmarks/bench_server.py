"""Language-server latency and memory, as an editor sees them, against reference servers.

    .venv/bin/python benchmarks/bench_server.py                  # 5k and 20k lines, 3 rounds
    .venv/bin/python benchmarks/bench_server.py --lines 20000 --repeat 5 --hovers 400
    .venv/bin/python benchmarks/bench_server.py --json results.json

A stdlib-only LSP client (a subprocess over stdio, JSON-RPC framed by hand) so that nothing
between the stopwatch and the server's pipe (pygls on the client side, asyncio scheduling) is
measured. Every time is taken when the reader thread has the whole message in hand.

Servers: `shardls serve`; a trivial pygls 2 server written to a temporary file (it answers
`initialize` and publishes empty diagnostics on didOpen/didChange: the floor any pygls server
pays for starting Python and importing pygls); `ruff server` when ruff is installed (a fast
native server, the yardstick for diagnostics latency); `pyright-langserver --stdio` when it is
on PATH (never installed by this script).

Per server and generated model file (benchmarks/generate_models.py), each round is one fresh
server process: spawn → `initialize` response and didOpen → first publishDiagnostics (each also
as the server's CPU time, which a busy machine stretches far less than wall-clock), and → the
publish that shows every tagged mistake (shardls publishes a long file in parts); a hover on
each of many positions (sites of specs, layers, device_put and constraints), sequentially;
a one-line didChange → the next publishDiagnostics; a second edit followed at once by hovers for
one second (what a user hovers while the edit is analysed); peak RSS (VmHWM from /proc, the
server and its children) with the file open. A second short session per round sends a hover
right after didOpen, the wait of a user who hovers as soon as the file shows; a third opens the
file again, warm: shardls then has its persistent cache from the first session (each round starts
with an empty cache folder of its own, SHARDLS_CACHE_DIR, so the first open is cold).

Targets for shardls (issue #14): initialize ≤ 1.2× the trivial pygls server; cold didOpen→first
diagnostics ≤ 5× ruff server, warm ≤ 2× ruff; didChange→diagnostics ≤ 1.5× ruff; hover p95
≤ 5 ms, also in the second after an edit; first hover ≤ 50 ms; peak RSS ≤ 120 MiB with the
20k-line file open. shardls' diagnostics are scored against the tagged mistakes (all found, none
extra), after the open, after the warm open and after the edit (which adds one mistake).

Timings are noisy on a shared machine: compare ratios from one run, and use --repeat.
"""

from __future__ import annotations

import argparse
import compileall
import io
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tokenize
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import unquote

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate_models import expected, write

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "benchmarks" / "generated"
WAIT_S = 180.0
"""Longest wait for one answer; pyright on a 20k-line file can take tens of seconds."""
MIB = 1024 * 1024
SEVERITIES = {1: "error", 2: "warning", 3: "information", 4: "hint"}

TRIVIAL_PYGLS = '''\
"""The floor for a pygls 2 server: initialize, and empty diagnostics for every open or change."""

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("trivial-pygls", "0")


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(params: types.DidOpenTextDocumentParams) -> None:
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(params.text_document.uri, [], params.text_document.version)
    )


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(params: types.DidChangeTextDocumentParams) -> None:
    server.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(params.text_document.uri, [], params.text_document.version)
    )


server.start_io()
'''

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


def shows_all(message: Message, text: str) -> bool:
    """Whether a publish shows every tagged mistake of `text` (as errors)."""
    shown = {(line, code) for line, code, severity in published(message) if severity == 1}
    return expected(text) <= shown


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


@dataclass
class Server:
    name: str
    command: list[str]
    cache_variable: str | None = None
    """The environment variable naming the server's persistent cache folder, if it has one."""
    progressive: bool = False
    """Whether it publishes a file's diagnostics in parts as it finds them (then its open is
    complete when every tagged mistake is shown; otherwise at its first publish)."""


Published = tuple[int, str, int]
"""A published diagnostic: (0-based line, code, LSP severity: 1 error, 2 warning, 3 info, 4 hint)."""


@dataclass
class Round:
    """One server process's measurements on one file (seconds, bytes)."""

    initialize: float
    initialize_cpu: float
    open_to_first_diagnostics: float
    open_to_diagnostics: float
    open_cpu: float
    hovers: list[float]
    hover_answered: int
    first_hover: float | None
    hover_with_open: float | None
    change_to_diagnostics: float
    changes_to_diagnostics: list[float]
    """More edits after the first, undoing and redoing it in turn (each waits for its publish)."""
    change_cpu: float | None
    """The server's CPU time per edit over those (None: no extra edits)."""
    hovers_after_edit: list[float]
    warm_open_to_diagnostics: float
    peak_rss: int
    published_after_open: list[Published] = field(default_factory=list)
    published_after_warm_open: list[Published] = field(default_factory=list)
    published_after_change: list[Published] = field(default_factory=list)


HOVER_TARGETS = re.compile(r"\b(P)\(|nnx\.(Linear)\(|jax\.(device_put)\(|(with_sharding_constraint)\(")


def _group_starts(text: str) -> Iterator[tuple[int, int]]:
    for number, line in enumerate(text.split("\n")):
        for match in HOVER_TARGETS.finditer(line):
            group = next(g for g in range(1, 5) if match.group(g) is not None)
            yield number, match.start(group)


def hover_positions(text: str, count: int) -> list[tuple[int, int]]:
    """Up to `count` (line, character) spots spread over the file, on what users hover: specs,
    layer constructors, device_put and with_sharding_constraint calls. The first is the spot in
    the middle of the file (see `first_hover_position`); the rest go from top to bottom."""
    spots = sorted(set(_group_starts(text)))
    if len(spots) > count:
        step = len(spots) / count
        spots = [spots[int(i * step)] for i in range(count)]
    first = first_hover_position(text)
    return [first, *(spot for spot in spots if spot != first)][:count]


def first_hover_position(text: str) -> tuple[int, int]:
    """The spec nearest the middle of the file: the first hover is timed there, not at the top,
    where a cost that grows with the distance from the start of the file would not show."""
    spots = sorted(set(_group_starts(text)))
    middle = text.count("\n") // 2
    return min(spots, key=lambda spot: (abs(spot[0] - middle), spot), default=(middle, 0))


@dataclass(frozen=True)
class Edit:
    """The measured one-line edit: characters `start` to `end` of `line` become `new`; the second
    edit (followed by hovers) makes those `new` characters `then`."""

    line: int
    start: int
    end: int
    new: str
    then: str


SUPPRESSION = "  # shardls: ignore[SH001]"
"""What the edit of a real file appends to a line: a suppression that silences nothing, so the
diagnostics change (an SH401 appears) wherever the line is."""


def one_line_edit(text: str) -> Edit:
    """An edit in the middle of the file. In a generated file, one untagged device_put becomes
    indivisible (128 rows → 129 over `data`=2, a new SH001); in another file, the end of the
    logical line nearest the middle gets an unused suppression comment (a new SH401)."""
    lines = text.split("\n")
    middle = len(lines) // 2
    for number in itertools.chain(range(middle, len(lines)), range(middle)):
        line = lines[number]
        if "device_put(jnp.zeros((128," in line and "expect:" not in line:
            start = line.index("(128,") + 1
            return Edit(number, start, start + 3, "129", "130")
    ends = _logical_line_ends(text)
    if not ends:
        raise ValueError("no line to edit")
    number = min(ends, key=lambda end: (abs(end - middle), end))
    return Edit(number, len(lines[number]), len(lines[number]), SUPPRESSION, SUPPRESSION.replace("1", "2"))


def _logical_line_ends(text: str) -> list[int]:
    """0-based lines where a logical line of code ends without a comment: a comment can be added
    there."""
    ends = []
    commented: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                commented.add(token.start[0] - 1)
            elif token.type == tokenize.NEWLINE:
                ends.append(token.start[0] - 1)
    except (tokenize.TokenError, SyntaxError):
        pass
    return [end for end in ends if end not in commented]


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


AFTER_EDIT_S = 1.0
"""How long hovers are sent after the second edit."""


def edit_params(uri: str, version: int, line: int, start: int, end: int, new: str) -> dict[str, Any]:
    change = {
        "range": {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}},
        "text": new,
    }
    return {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}


def hovers_after_edit(connection: Connection, uri: str, text: str, edit: dict[str, Any]) -> list[float]:
    """Send `edit`, then hovers one after the other (spread over the file) for AFTER_EDIT_S."""
    positions = hover_positions(text, 50)
    connection.notify("textDocument/didChange", edit)
    times: list[float] = []
    ends = time.perf_counter() + AFTER_EDIT_S
    for position in itertools.cycle(positions):
        if time.perf_counter() >= ends:
            break
        times.append(hover(connection, uri, position)[0])
    return times


def undo_and_redo(
    connection: Connection, uri: str, edit: Edit, kind: int, text: str, count: int
) -> tuple[list[float], float | None]:
    """After the measured edit, `count` more (an even number), undoing and redoing it in turn,
    each sent once the previous one's diagnostics arrived: the didChange → diagnostics time of
    each, and the server's CPU time per edit over all of them (its clock ticks are 10 ms, too
    coarse for one edit). The text is then as after the measured edit."""
    count -= count % 2
    if kind != 2 or count <= 0:
        return [], None
    old = text.split("\n")[edit.line][edit.start : edit.end]
    undo = (edit.start, edit.start + len(edit.new), old)
    redo = (edit.start, edit.start + len(old), edit.new)
    times = []
    cpu = cpu_seconds(connection.process.pid)
    for number in range(count):
        start, end, new = redo if number % 2 else undo
        after = connection.mark()
        params = edit_params(uri, 3 + number, edit.line, start, end, new)
        sent = connection.notify("textDocument/didChange", params)
        times.append(connection.diagnostics(uri, after).at - sent)
    return times, (cpu_seconds(connection.process.pid) - cpu) / count


def measure(server: Server, path: Path, hovers: int, logs: Path, edits: int) -> Round:
    """One fresh process: initialize, open, hovers, a one-line edit, hovers right after a second
    edit, peak RSS; then a second process for the hover sent right after didOpen, and a third for
    a warm open. The server's persistent cache (if any) starts empty."""
    text = path.read_text()
    uri = path.as_uri()
    env = None
    if server.cache_variable is not None:
        cache = logs / f"{server.name}-cache"
        shutil.rmtree(cache, ignore_errors=True)
        env = {server.cache_variable: str(cache)}
    connection = Connection(server.command, path.parent, logs / f"{server.name}.log", env)
    try:
        initialized, initialize_cpu, capabilities = initialize(connection, path.parent)
        after = connection.mark()
        cpu_before = cpu_seconds(connection.process.pid)
        sent = connection.notify("textDocument/didOpen", open_params(uri, text))
        first = connection.diagnostics(uri, after)
        opened = (
            connection.wait(lambda m: is_publish(m, uri) and shows_all(m, text), after)
            if server.progressive
            else first
        )
        open_cpu = cpu_seconds(connection.process.pid) - cpu_before

        times: list[float] = []
        answered = 0
        if capabilities.get("hoverProvider"):
            for position in hover_positions(text, hovers):
                took, content = hover(connection, uri, position)
                times.append(took)
                answered += content

        before_edit = latest_publish(connection, uri)
        edit = one_line_edit(text)
        line, start, end, new = edit.line, edit.start, edit.end, edit.new
        sync = capabilities.get("textDocumentSync")
        kind = sync.get("change", 0) if isinstance(sync, dict) else sync
        lines = text.split("\n")
        edited = lines[line][:start] + new + lines[line][end:]
        if kind == 2:  # incremental, what editors send when allowed
            change = edit_params(uri, 2, line, start, end, new)
            second = edit_params(uri, 3, line, start, start + len(new), edit.then)
        else:
            lines[line] = edited
            change = {
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"text": "\n".join(lines)}],
            }
            lines[line] = edited.replace(new, edit.then, 1)
            second = {
                "textDocument": {"uri": uri, "version": 3},
                "contentChanges": [{"text": "\n".join(lines)}],
            }
        after = connection.mark()
        changed_at = connection.notify("textDocument/didChange", change)
        changed = connection.diagnostics(uri, after)
        again, change_cpu = undo_and_redo(connection, uri, edit, kind, text, edits)
        second["textDocument"]["version"] = 3 + len(again)
        after_edit = (
            hovers_after_edit(connection, uri, text, second) if capabilities.get("hoverProvider") else []
        )
        rss = peak_rss(connection.process.pid)
    finally:
        connection.close()

    with_open = None
    if capabilities.get("hoverProvider"):
        hovering = Connection(server.command, path.parent, logs / f"{server.name}-hover.log", env)
        try:
            initialize(hovering, path.parent)
            hovering.notify("textDocument/didOpen", open_params(uri, text))
            with_open, _ = hover(hovering, uri, first_hover_position(text))
        finally:
            hovering.close()

    warm = Connection(server.command, path.parent, logs / f"{server.name}-warm.log", env)
    try:
        initialize(warm, path.parent)
        after = warm.mark()
        warm_sent = warm.notify("textDocument/didOpen", open_params(uri, text))
        warm_opened = warm.diagnostics(uri, after)
        if server.progressive:  # a cache that did not hold shows as a cold open, not as its first part
            warm_opened = warm.wait(lambda m: is_publish(m, uri) and shows_all(m, text), after)
    finally:
        warm.close()

    return Round(
        initialize=initialized,
        initialize_cpu=initialize_cpu,
        open_to_first_diagnostics=first.at - sent,
        open_to_diagnostics=opened.at - sent,
        open_cpu=open_cpu,
        hovers=times,
        hover_answered=answered,
        first_hover=times[0] if times else None,
        hover_with_open=with_open,
        change_to_diagnostics=changed.at - changed_at,
        changes_to_diagnostics=again,
        change_cpu=change_cpu,
        hovers_after_edit=after_edit,
        warm_open_to_diagnostics=warm_opened.at - warm_sent,
        peak_rss=rss,
        published_after_open=published(before_edit),
        published_after_warm_open=published(warm_opened),
        published_after_change=published(changed),
    )


def servers(scratch: Path, only: list[str] | None) -> list[Server]:
    floor = scratch / "trivial_pygls.py"
    floor.write_text(TRIVIAL_PYGLS)
    found: list[Server] = [
        Server(
            "shardls", [sys.executable, "-I", "-m", "shardls", "serve"], "SHARDLS_CACHE_DIR", progressive=True
        ),
        Server("pygls-floor", [sys.executable, str(floor)]),
    ]
    ruff = Path(sys.executable).with_name("ruff")
    ruff_path = str(ruff) if ruff.exists() else shutil.which("ruff")
    if ruff_path:
        found.append(Server("ruff", [ruff_path, "server"]))
    if pyright := shutil.which("pyright-langserver"):
        found.append(Server("pyright", [pyright, "--stdio"]))
    return [server for server in found if only is None or server.name in only]


def quantile(values: list[float], q: float) -> float:
    """Nearest-rank quantile, so p95 of 200 hovers is the 190th, an observed time."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


@dataclass
class Summary:
    """One server on one file over all rounds: medians of per-round times, pooled hovers."""

    initialize: float
    initialize_cpu: float
    open_to_first_diagnostics: float
    open_to_diagnostics: float
    open_cpu: float
    warm_open_to_diagnostics: float
    change_to_diagnostics: float
    changes_to_diagnostics: float | None
    """The median of the undo/redo edits' times (all rounds)."""
    change_cpu: float | None
    hover_p50: float | None
    hover_p95: float | None
    hover_max: float | None
    hover_count: int
    hover_after_edit_p95: float | None
    hover_after_edit_first: float | None
    hover_after_edit_count: int
    hover_answered: int
    first_hover: float | None
    hover_with_open: float | None
    peak_rss: int


def summarize(rounds: list[Round]) -> Summary:
    hovers = [t for r in rounds for t in r.hovers]
    after_edit = [t for r in rounds for t in r.hovers_after_edit]
    return Summary(
        initialize=statistics.median(r.initialize for r in rounds),
        initialize_cpu=statistics.median(r.initialize_cpu for r in rounds),
        open_to_first_diagnostics=statistics.median(r.open_to_first_diagnostics for r in rounds),
        open_to_diagnostics=statistics.median(r.open_to_diagnostics for r in rounds),
        open_cpu=statistics.median(r.open_cpu for r in rounds),
        warm_open_to_diagnostics=statistics.median(r.warm_open_to_diagnostics for r in rounds),
        change_to_diagnostics=statistics.median(r.change_to_diagnostics for r in rounds),
        changes_to_diagnostics=median([t for r in rounds for t in r.changes_to_diagnostics]),
        change_cpu=median([r.change_cpu for r in rounds]),
        hover_p50=quantile(hovers, 0.5) if hovers else None,
        hover_p95=quantile(hovers, 0.95) if hovers else None,
        hover_max=max(hovers) if hovers else None,
        hover_count=len(hovers),
        hover_after_edit_p95=quantile(after_edit, 0.95) if after_edit else None,
        hover_after_edit_first=median(
            [r.hovers_after_edit[0] if r.hovers_after_edit else None for r in rounds]
        ),
        hover_after_edit_count=len(after_edit),
        hover_answered=sum(r.hover_answered for r in rounds),
        first_hover=median([r.first_hover for r in rounds]),
        hover_with_open=median([r.hover_with_open for r in rounds]),
        peak_rss=max(r.peak_rss for r in rounds),
    )


def ms(value: float | None) -> str:
    return "—" if value is None else f"{value * 1e3:.1f} ms"


def print_table(summaries: dict[str, Summary]) -> None:
    rows: list[tuple[str, Callable[[Summary], str]]] = [
        ("spawn → initialize", lambda s: ms(s.initialize)),
        ("  server CPU until then", lambda s: ms(s.initialize_cpu)),
        ("didOpen → first diagnostics", lambda s: ms(s.open_to_first_diagnostics)),
        ("didOpen → all diagnostics", lambda s: ms(s.open_to_diagnostics)),
        ("  server CPU meanwhile", lambda s: ms(s.open_cpu)),
        ("warm didOpen → diagnostics", lambda s: ms(s.warm_open_to_diagnostics)),
        ("didChange → diagnostics", lambda s: ms(s.change_to_diagnostics)),
        ("  median of the undo/redo edits", lambda s: ms(s.changes_to_diagnostics)),
        ("  server CPU per edit", lambda s: ms(s.change_cpu)),
        ("hover p50", lambda s: ms(s.hover_p50)),
        ("hover p95", lambda s: ms(s.hover_p95)),
        ("hover max", lambda s: ms(s.hover_max)),
        ("hovers with content", lambda s: f"{s.hover_answered}/{s.hover_count}" if s.hover_count else "—"),
        ("hover p95, 1 s after an edit", lambda s: ms(s.hover_after_edit_p95)),
        ("  the first of them", lambda s: ms(s.hover_after_edit_first)),
        (
            "  hovers in that second",
            lambda s: str(s.hover_after_edit_count) if s.hover_after_edit_count else "—",
        ),
        ("first hover (after diags)", lambda s: ms(s.first_hover)),
        ("hover sent with didOpen", lambda s: ms(s.hover_with_open)),
        ("peak RSS", lambda s: f"{s.peak_rss / MIB:.1f} MiB"),
    ]
    names = list(summaries)
    width = max(len(label) for label, _ in rows)
    print(f"  {'':<{width}}  " + "  ".join(f"{name:>12}" for name in names))
    for label, cell in rows:
        print(f"  {label:<{width}}  " + "  ".join(f"{cell(summaries[name]):>12}" for name in names))


def check(label: str, value: float | None, limit: float, unit: str) -> bool | None:
    if value is None:
        print(f"  {label}: not measured")
        return None
    ok = value <= limit
    print(f"  {label}: {value:.2f}{unit} (target ≤ {limit:g}{unit}) {'ok' if ok else 'MISSED'}")
    return ok


def _to_ms(seconds: float | None) -> float | None:
    return None if seconds is None else seconds * 1e3


def report_targets(summaries: dict[str, Summary], lines: int) -> None:
    shardls = summaries.get("shardls")
    if shardls is None:
        return
    floor, ruff = summaries.get("pygls-floor"), summaries.get("ruff")
    print("  targets for shardls:")
    if floor:
        check("initialize vs trivial pygls", shardls.initialize / floor.initialize, 1.2, "×")
        if floor.initialize_cpu:
            check("  the same in CPU time", shardls.initialize_cpu / floor.initialize_cpu, 1.2, "×")
    if ruff:
        ratios: list[tuple[str, Callable[[Summary], float], float]] = [
            ("cold didOpen→first diagnostics", lambda s: s.open_to_first_diagnostics, 5),
            ("cold didOpen→all diagnostics", lambda s: s.open_to_diagnostics, 5),
            ("warm didOpen→diagnostics", lambda s: s.warm_open_to_diagnostics, 2),
            ("didChange→diagnostics", lambda s: s.change_to_diagnostics, 1.5),
        ]
        for label, time_of, limit in ratios:
            check(f"{label} vs ruff", time_of(shardls) / time_of(ruff), limit, "×")
        for label, value_of in (
            ("  median of the undo/redo edits", lambda s: s.changes_to_diagnostics),
            ("  the same in CPU time", lambda s: s.change_cpu),
        ):
            mine, theirs = value_of(shardls), value_of(ruff)
            if mine is not None and theirs:
                check(f"{label} vs ruff", mine / theirs, 1.5, "×")
    check("hover p95", _to_ms(shardls.hover_p95), 5, " ms")
    check("hover p95 in the second after an edit", _to_ms(shardls.hover_after_edit_p95), 5, " ms")
    check("first hover after the diagnostics", _to_ms(shardls.first_hover), 50, " ms")
    check("hover sent right with didOpen", _to_ms(shardls.hover_with_open), 50, " ms")
    if lines >= 20_000:
        check("peak RSS with the file open", shardls.peak_rss / MIB, 120, " MiB")


def report_score(rounds: list[Round], text: str) -> bool:
    """shardls' published diagnostics against the tagged lines, after open and after the edit.

    The tagged mistakes are all errors, so errors are scored (all found, none extra; the exit
    status); diagnostics of other severities are counted by code, so that any that appear
    are seen, not hidden.
    """
    wanted = expected(text)
    line = one_line_edit(text).line
    ok = True
    for name, diagnostics, want in (
        ("after didOpen", rounds[0].published_after_open, wanted),
        ("after the warm didOpen", rounds[0].published_after_warm_open, wanted),
        ("after the edit", rounds[0].published_after_change, wanted | {(line, "SH001")}),
    ):
        got = {(number, code) for number, code, severity in diagnostics if severity == 1}
        missed, extra = want - got, got - want
        ok = ok and not missed and not extra
        others = Counter(
            f"{code} ({SEVERITIES.get(severity, severity)})"
            for _, code, severity in diagnostics
            if severity != 1
        )
        print(
            f"  shardls errors {name}: {len(want)} tagged, found {len(want & got)}, "
            f"missed {len(missed)}, extra {len(extra)}"
            + (f" e.g. {sorted(missed)[:5]}" if missed else "")
            + (f" e.g. {sorted(extra)[:5]}" if extra else "")
            + ("; also " + ", ".join(f"{n}× {c}" for c, n in sorted(others.items())) if others else "")
        )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[5_000, 20_000], help="generated file sizes")
    parser.add_argument("--repeat", type=int, default=3, help="fresh server processes per server and file")
    parser.add_argument("--hovers", type=int, default=200, help="hover positions per round")
    parser.add_argument("--edits", type=int, default=10, help="undo/redo edits after the measured one (even)")
    parser.add_argument("--servers", nargs="+", help="only these (shardls, pygls-floor, ruff, pyright)")
    parser.add_argument("--json", type=Path, help="also write the summaries here")
    parser.add_argument(
        "--files",
        type=Path,
        nargs="+",
        default=[],
        help="real files to measure too, in their own folders (read, never written; see `one_line_edit`)",
    )
    args = parser.parse_args(argv)

    # An installed shardls (a wheel, the VS Code bundle) starts from bytecode pip compiled, as
    # pygls and lsprotocol do here; a source checkout under PYTHONDONTWRITEBYTECODE=1 would
    # compile every module at each start and be timed for that instead.
    compileall.compile_dir(str(ROOT / "shardls"), quiet=1)
    results: dict[str, dict[str, Any]] = {}
    scored = True
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        chosen = servers(scratch, args.servers)
        print("servers: " + ", ".join(f"{s.name} ({' '.join(s.command)})" for s in chosen))
        for path in [*(write(GENERATED, lines) for lines in args.lines), *args.files]:
            text = path.read_text()
            lines = text.count("\n")
            rounds: dict[str, list[Round]] = {server.name: [] for server in chosen}
            for _ in range(args.repeat):
                for server in chosen:  # interleaved, so a burst of machine load hits every server
                    rounds[server.name].append(measure(server, path, args.hovers, scratch, args.edits))
            summaries = {name: summarize(rs) for name, rs in rounds.items()}
            print(
                f"\n{path.name}: {text.count(chr(10))} lines, {len(expected(text))} tagged mistakes, "
                f"{args.repeat} rounds (medians; hovers pooled)"
            )
            print_table(summaries)
            report_targets(summaries, lines)
            if "shardls" in rounds and expected(text):
                scored = report_score(rounds["shardls"], text) and scored
            results[path.name] = {name: asdict(summary) for name, summary in summaries.items()}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0 if scored else 1


if __name__ == "__main__":
    sys.exit(main())
