"""Colours of the text formats, in ruff's scheme: the path bold, the code coloured by
severity (red errors, yellow warnings, cyan notes), the source gutter blue, the underline in
the code's colour, `help`/`note` labels bold. Without colour every style is the text itself,
so the plain output is byte-for-byte what a pipe or a file gets."""

from __future__ import annotations

from dataclasses import dataclass

from shardls.core import Severity

_RESET = "\x1b[0m"
_BOLD = "1"
_SEVERITY_COLORS = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}
_BLUE = "34"
_CYAN = "36"


@dataclass(frozen=True)
class Style:
    color: bool

    def _paint(self, text: str, *codes: str) -> str:
        return f"\x1b[{';'.join(codes)}m{text}{_RESET}" if self.color and text else text

    def path(self, text: str) -> str:
        return self._paint(text, _BOLD)

    def severity(self, text: str, severity: Severity) -> str:
        """A rule code or its underline, in the colour of its severity."""
        return self._paint(text, _BOLD, _SEVERITY_COLORS[severity])

    def gutter(self, text: str) -> str:
        return self._paint(text, _BOLD, _BLUE)

    def label(self, text: str) -> str:
        return self._paint(text, _BOLD, _CYAN)

    def emphasis(self, text: str) -> str:
        return self._paint(text, _BOLD)
