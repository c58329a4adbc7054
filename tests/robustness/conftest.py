"""The robustness tests reuse the server tests' client (tests/server/lsp_helpers.py)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

import pytest_lsp
from lsp_helpers import RecordingClient, server_config


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: RecordingClient) -> AsyncIterator[None]:
    yield
    await lsp_client.shutdown_session()
