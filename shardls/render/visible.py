"""Text from the workspace (source lines, file names, axis names in messages) as a terminal
shows it harmlessly.

A source line or a file name can hold terminal escape sequences (`\\x1b]0;...`, `\\x1b[2J`):
written raw, they retitle, clear or rewrite the user's terminal, and can hide a diagnostic.
The text renderings therefore show each control character as its Unicode control picture
(`\\x1b` as `␛`, as ruff does), one character for one, so underlines stay under their columns.
Tabs are left to the renderings (they expand them); JSON and SARIF keep the data exact.
"""

from __future__ import annotations

_PICTURES = {
    **{code: 0x2400 + code for code in range(0x20) if code != ord("\t")},
    0x7F: 0x2421,
    **dict.fromkeys(range(0x80, 0xA0), 0xFFFD),  # C1 controls (`\x9b` starts a sequence too)
}


def visible(text: str) -> str:
    """`text` with every control character but the tab shown as a visible character."""
    return text.translate(_PICTURES)
