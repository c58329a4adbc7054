"""What the terminal can show: characters its encoding can encode, and whether to colour.

Renderings write Unicode (`→`, `×`, box-drawing tables) and the user's own source text. A
stream whose encoding cannot encode a character (`PYTHONIOENCODING=cp1252`, a Windows console,
`LANG=C`) would raise UnicodeEncodeError halfway through the output. Instead of every rendering
choosing glyphs, the streams get one error handler (`ASCII_FALLBACK`): a character the stream's
encoding can encode is written as it is, one it cannot is replaced by its ASCII spelling
(box-drawing by `+-|`, keeping tables aligned), and anything else by `?`.

Colour follows the conventions users expect from ruff and Python: `--color always|never`
decides; with `auto` (the default) `NO_COLOR` (non-empty) turns it off, then `FORCE_COLOR`
(non-empty) turns it on, and otherwise only a terminal that is not `TERM=dumb` gets colour.
"""

from __future__ import annotations

import codecs
import io
import os
import unicodedata
from collections.abc import Mapping
from typing import TextIO

ERROR_HANDLER = "shardls-ascii"

ASCII_FALLBACK: Mapping[str, str] = {
    "→": "->",
    "←": "<-",
    "↛": "-/->",
    "×": "x",
    "·": ".",
    "…": "...",
    "—": "--",
    "–": "-",
    "±": "+/-",
    "§": "S",
    "Π": "prod",
    "≤": "<=",
    "≥": ">=",
    "≠": "!=",
    "‘": "'",
    "’": "'",
    "“": '"',
    "”": '"',
    **dict.fromkeys("┌┐└┘├┤┬┴┼╭╮╰╯", "+"),
    **dict.fromkeys("─━═", "-"),
    **dict.fromkeys("│┃║", "|"),
}
"""ASCII for the characters shardls itself writes; a box-drawing character is one ASCII
character so that tables keep their columns."""

COLOR_CHOICES = ("auto", "always", "never")


def ascii_spelling(character: str) -> str:
    """The ASCII a stream shows for a character it cannot encode: the table's, else the
    character without its accents (`é` → `e`), else `?`."""
    known = ASCII_FALLBACK.get(character)
    if known is not None:
        return known
    stripped = unicodedata.normalize("NFKD", character).encode("ascii", "ignore").decode("ascii")
    return stripped or "?"


def _replace_unencodable(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return "".join(map(ascii_spelling, error.object[error.start : error.end])), error.end


codecs.register_error(ERROR_HANDLER, _replace_unencodable)


def use_ascii_fallback(stream: TextIO) -> None:
    """Make `stream` write what its encoding cannot encode as ASCII instead of raising or
    writing `\\u2192` escapes. Only Python's defaults are replaced (strict for stdout,
    backslashreplace for stderr): an error handler the user chose in PYTHONIOENCODING stays.
    Streams that are not text files (a StringIO) encode nothing and are left alone."""
    if isinstance(stream, io.TextIOWrapper) and stream.errors in ("strict", "backslashreplace"):
        stream.reconfigure(errors=ERROR_HANDLER)


def use_color(stream: TextIO, choice: str = "auto", environ: Mapping[str, str] | None = None) -> bool:
    """Whether to write ANSI colours to `stream` (see the module docstring for the order)."""
    if choice != "auto":
        return choice == "always"
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    if env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except ValueError:  # a closed stream
        return False
