"""Text from the workspace (source lines, file names, axis names in messages) as a terminal
shows it harmlessly.

A source line or a file name can hold terminal escape sequences (`\\x1b]0;...`, `\\x1b[2J`):
written raw, they retitle, clear or rewrite the user's terminal, and can hide a diagnostic.
The text renderings therefore show each control character as its Unicode control picture
(`\\x1b` as `␛`, as ruff does), one character for one, so underlines stay under their columns.
Tabs and line ends are left to the renderings (they expand tabs, and a line end moves no
cursor back); JSON and SARIF keep the data exact.
"""

from __future__ import annotations

_PICTURES = {
    **{code: 0x2400 + code for code in range(0x20) if chr(code) not in "\t\n"},
    0x7F: 0x2421,
    **dict.fromkeys(range(0x80, 0xA0), 0xFFFD),  # C1 controls (`\x9b` starts a sequence too)
}


def visible(text: str) -> str:
    """`text` with every control character but the tab and the line end shown visibly."""
    return text.translate(_PICTURES)
