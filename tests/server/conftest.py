"""Each test gets its own `shardls serve` process; the test initializes it (capabilities,
settings and workspace folder differ between tests) and the fixture shuts it down. The tests of
hostile protocol traffic reuse the raw client of tests/robustness (raw_client.py)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_lsp
from lsp_helpers import RecordingClient, server_config

from shardls.server.guard import FAIL_ENV

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "robustness"))


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: RecordingClient) -> AsyncIterator[None]:
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=server_config(**{FAIL_ENV: "textDocument/hover"}))
async def failing_client(lsp_client: RecordingClient) -> AsyncIterator[None]:
    """A server whose hover handler raises on purpose."""
    yield
    await lsp_client.shutdown_session()
