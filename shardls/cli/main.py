"""`shardls`: the command-line entry point (console script and `python -m shardls`).

Subcommands are modules listed in COMMANDS; each adds its own parser and runs itself
(see `shardls.cli.command.Command`).
"""

from __future__ import annotations

import os
import sys

from shardls import __version__
from shardls.cli import check_cmd, explain_cmd, layout_cmd, serve_cmd
from shardls.cli.command import EXIT_PROBLEMS, EXIT_USAGE, ArgumentParser, Command, UsageError

COMMANDS: tuple[Command, ...] = (check_cmd, explain_cmd, layout_cmd, serve_cmd)


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="shardls",
        description="See how JAX/Flax arrays are laid out across devices, without running them.",
    )
    parser.add_argument("--version", action="version", version=f"shardls {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; returns the exit status (argparse's own exits are returned, not raised)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    command = next(c for c in COMMANDS if args.command == c.NAME)
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
