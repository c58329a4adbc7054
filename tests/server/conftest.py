"""Each test gets its own `shardls serve` process; the test initializes it (capabilities,
settings and workspace folder differ between tests) and the fixture shuts it down. The tests of
hostile protocol traffic reuse the raw client of tests/robustness (raw_client.py)."""

from __future__ import annotations

import gc
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
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


@pytest.fixture(autouse=True)
def _collected_as_usual() -> Iterator[None]:
    """An `Analyses` made in the test process freezes what its analyses keep (`collection`):
    returned to the collector after the test, so the process's later tests are collected as
    usual."""
    yield
    gc.unfreeze()
