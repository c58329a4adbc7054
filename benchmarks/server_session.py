"""The servers `bench_server.py` measures and one round of each: a fresh process that is
initialized, opens the file, answers hovers and edits, then a second process for a hover sent
right with didOpen and a third for a warm open."""

from __future__ import annotations

import itertools
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generate_models import expected
from lsp_client import (
    Connection,
    Message,
    Published,
    cpu_seconds,
    edit_params,
    hover,
    initialize,
    is_publish,
    latest_publish,
    open_params,
    peak_rss,
    published,
)
from server_files import Edit, first_hover_position, hover_positions, one_line_edit

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


def shows_all(message: Message, text: str) -> bool:
    """Whether a publish shows every tagged mistake of `text` (as errors)."""
    shown = {(line, code) for line, code, severity in published(message) if severity == 1}
    return expected(text) <= shown


@dataclass
class Server:
    name: str
    command: list[str]
    cache_variable: str | None = None
    """The environment variable naming the server's persistent cache folder, if it has one."""
    progressive: bool = False
    """Whether it publishes a file's diagnostics in parts as it finds them (then its open is
    complete when every tagged mistake is shown; otherwise at its first publish)."""


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
    enters_to_diagnostics: list[float]
    """Then Enters, each undone by the whole text (`enter_and_undo`): the Enters' times..."""
    undos_to_diagnostics: list[float]
    """... and the undos'."""
    enter_cpu: float | None
    """The server's CPU time per Enter (None: not measured)."""
    undo_cpu: float | None
    """The server's CPU time per undo (None: not measured)."""
    hovers_after_edit: list[float]
    warm_open_to_diagnostics: float
    peak_rss: int
    published_after_open: list[Published] = field(default_factory=list)
    published_after_warm_open: list[Published] = field(default_factory=list)
    published_after_change: list[Published] = field(default_factory=list)


AFTER_EDIT_S = 1.0
"""How long hovers are sent after the second edit."""


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


ENTER_LINE = 10
"""Where `enter_and_undo` types its Enter (0-based; the last line of a shorter file): between
two statements in most files, as the figures of docs/architecture.md were measured."""


def enter_and_undo(
    connection: Connection, uri: str, edit: Edit, kind: int, text: str, count: int, version: int
) -> tuple[list[float], list[float], float | None, float | None]:
    """`count` more edits (from `version` on), in pairs: an Enter at the start of line
    `ENTER_LINE` (a range, as typed), then its undo sent as the whole text, as several editors'
    undo, full-sync clients, a formatter or "revert file" send a change; each is sent once the
    previous one's diagnostics arrived. The didChange → diagnostics times of the Enters and of
    the undos, and the server's CPU time per Enter and per undo (each summed over its edits
    alone). The text is then as after the measured edit."""
    if kind != 2 or count < 2:
        return [], [], None, None
    lines = text.split("\n")
    lines[edit.line] = lines[edit.line][: edit.start] + edit.new + lines[edit.line][edit.end :]
    enter = (min(ENTER_LINE, len(lines) - 1), 0, 0, "\n")
    whole = {"text": "\n".join(lines)}
    times: tuple[list[float], list[float]] = ([], [])
    cpu = [0.0, 0.0]
    for number in range(version, version + count - count % 2):
        undo = (number - version) % 2
        if undo:
            params = {"textDocument": {"uri": uri, "version": number}, "contentChanges": [whole]}
        else:
            params = edit_params(uri, number, *enter)
        before, after = cpu_seconds(connection.process.pid), connection.mark()
        sent = connection.notify("textDocument/didChange", params)
        times[undo].append(connection.diagnostics(uri, after).at - sent)
        cpu[undo] += cpu_seconds(connection.process.pid) - before
    pairs = len(times[1])
    return times[0], times[1], cpu[0] / pairs, cpu[1] / pairs


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
        enters, undos, enter_cpu, undo_cpu = enter_and_undo(
            connection, uri, edit, kind, text, edits, 3 + len(again)
        )
        second["textDocument"]["version"] = 3 + len(again) + len(enters) + len(undos)
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
        enters_to_diagnostics=enters,
        undos_to_diagnostics=undos,
        enter_cpu=enter_cpu,
        undo_cpu=undo_cpu,
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
