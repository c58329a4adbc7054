"""The robustness tests reuse the server tests' helpers (tests/server/lsp_helpers.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
