"""Quick fixes, shared by the language server (code actions) and `shardls check --fix`/`--diff`.

This layer knows the analysis and the text, never LSP or the command line: a fix is a title and
edits at lines and columns of the analysed text (`Edit`), which the server turns into
WorkspaceEdits and the CLI applies with `apply_edits`.
"""

from __future__ import annotations

from shardls.fixes.apply import Conflict, apply_edits, certain_fixes
from shardls.fixes.catalog import fixes_for
from shardls.fixes.model import Edit, Fix, FixSource

__all__ = ["Conflict", "Edit", "Fix", "FixSource", "apply_edits", "certain_fixes", "fixes_for"]
