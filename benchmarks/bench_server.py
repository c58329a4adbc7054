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

The parts, beside this command line: `lsp_client.py` (the client, and the CPU time and memory
read from /proc), `server_files.py` (where a round hovers and what it edits), `server_session.py`
(the servers and one round of each) and `server_report.py` (the summaries, the table, the
targets and the score).

Timings are noisy on a shared machine: compare ratios from one run, and use --repeat.
"""

from __future__ import annotations

import argparse
import compileall
import json
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate_models import expected, write
from server_report import print_table, report_score, report_targets, summarize
from server_session import Round, measure, servers

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "benchmarks" / "generated"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[5_000, 20_000], help="generated file sizes")
    parser.add_argument("--repeat", type=int, default=3, help="fresh server processes per server and file")
    parser.add_argument("--hovers", type=int, default=200, help="hover positions per round")
    parser.add_argument(
        "--edits",
        type=int,
        default=10,
        help="undo/redo edits after the measured one, and as many Enters and whole-text undos (even)",
    )
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
