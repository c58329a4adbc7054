"""What every subcommand module provides, and the one-line error conventions they share.

A subcommand is a module with a `NAME`, an `add_parser(subparsers)` and a `run(args) -> int`;
`shardls.cli.main` lists the modules, so adding a command touches one tuple and nothing else.
Exit statuses: 0 no error-level problem, 1 an error-level problem (or stdout closed by its
reader before the output was written), 2 bad usage.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import NoReturn, Protocol, TypeAlias, TypeVar

from shardls.core.suggest import did_you_mean

T = TypeVar("T")

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2


class UsageError(Exception):
    """Arguments that parse one by one but do not fit together; `main` prints it on one line, exit 2."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr (no usage block), so scripts can show
    it, and a mistyped choice or option is answered with the one it most resembles."""

    def error(self, message: str) -> NoReturn:
        unknown = message.removeprefix(_UNRECOGNIZED)
        if unknown != message:
            first = unknown.split()[0].partition("=")[0]
            message += did_you_mean(first, self._all_option_strings())
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")

    def _check_value(self, action: argparse.Action, value: object) -> None:
        choices = action.choices
        if choices is not None and value not in choices:
            names = [str(choice) for choice in choices]
            raise argparse.ArgumentError(
                action,
                f"invalid choice: {value!r}{did_you_mean(str(value), names)} "
                f"(choose from {', '.join(map(repr, names))})",
            )

    def _all_option_strings(self) -> list[str]:
        """This parser's options and its subcommands' (argparse reports a subcommand's unknown
        option from the top-level parser)."""
        found = list(self._option_string_actions)
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                for parser in action.choices.values():
                    found += parser._option_string_actions
        return found


_UNRECOGNIZED = "unrecognized arguments: "


Subparsers: TypeAlias = "argparse._SubParsersAction[ArgumentParser]"
"""The object `add_subparsers()` returns; argparse does not export its type."""


class Command(Protocol):
    """A subcommand module (modules satisfy protocols by their attributes)."""

    NAME: str

    def add_parser(self, subparsers: Subparsers) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


def option_type(parse: Callable[[str], T]) -> Callable[[str], T]:
    """Adapt a parser that raises ValueError for argparse's `type=`.

    argparse shows only an ArgumentTypeError's own message; for a ValueError it prints a generic
    "invalid value", which would hide why the text was rejected.
    """

    def convert(text: str) -> T:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    convert.__name__ = parse.__name__
    return convert
