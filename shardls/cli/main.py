"""`shardls`: the command-line entry point (console script and `python -m shardls`).

Subcommands are the modules named in COMMAND_NAMES; each adds its own parser and runs itself
(see `shardls.cli.command.Command`).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import cast

from shardls import __version__
from shardls.cli.command import EXIT_PROBLEMS, EXIT_USAGE, ArgumentParser, Command, UsageError
from shardls.cli.terminal import use_ascii_fallback

COMMAND_NAMES = ("check", "explain", "layout", "report", "serve")
"""Each is the module `shardls.cli.<name>_cmd`."""


def _command(name: str) -> Command:
    return cast(Command, importlib.import_module(f"shardls.cli.{name}_cmd"))


def build_parser(only: str | None = None) -> ArgumentParser:
    """The parser with every command, or with `only` one: a command imports nothing the others
    need (`shardls serve` must start without the analysis)."""
    parser = ArgumentParser(
        prog="shardls",
        description="See how JAX/Flax arrays are laid out across devices, without running them.",
    )
    parser.add_argument("--version", action="version", version=f"shardls {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in (only,) if only else COMMAND_NAMES:
        _command(name).add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; returns the exit status (argparse's own exits are returned, not raised).

    Whatever goes wrong inside shardls ends in one line on stderr and status 2, never in a
    traceback, and never in status 1, which means "found problems" to CI.
    """
    arguments = sys.argv[1:] if argv is None else argv
    command_name = arguments[0] if arguments and arguments[0] in COMMAND_NAMES else None
    if command_name != "serve":  # the server speaks bytes on stdout
        use_ascii_fallback(sys.stdout)
        use_ascii_fallback(sys.stderr)
    try:
        return _run(arguments, command_name)
    except Exception as error:  # a bug in shardls: say so in one line, and never exit 1
        print(_internal_error_line(error), file=sys.stderr)
        return EXIT_USAGE


def _run(arguments: list[str], command_name: str | None) -> int:
    parser = build_parser(command_name)
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    command = _command(args.command)
    try:
        return command.run(args)
    except UsageError as error:
        print(f"shardls {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # `shardls layout ... --json | head`: the reader left. Send what is still buffered to
        # /dev/null so the interpreter's final flush cannot fail again (Python's documented recipe).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PROBLEMS


def _internal_error_line(error: BaseException) -> str:
    import traceback  # 5 ms of start-up every run would pay for this line only

    from shardls.analysis.rules import PROJECT_URL

    where = ""
    if error.__traceback__ is not None:
        frame = traceback.extract_tb(error.__traceback__)[-1]
        where = f" at {os.path.basename(frame.filename)}:{frame.lineno}"
    message = " ".join(str(error).split()) or "(no message)"
    return (
        f"shardls: internal error: {type(error).__name__}: {message}{where} "
        f"(shardls {__version__}; please report it at {PROJECT_URL}/issues)"
    )
