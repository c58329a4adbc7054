"""The robustness tests reuse the server tests' client (tests/server/lsp_helpers.py)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

import pytest
import pytest_lsp
from lsp_helpers import RecordingClient, server_config

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """This folder's `slow` tests (the long fuzzing run) run only when asked for: `-m slow`."""
    if "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with `-m slow`, or benchmarks/fuzz_long.py")
    for item in items:
        if "slow" in item.keywords and HERE in item.path.parents:
            item.add_marker(skip)


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: RecordingClient) -> AsyncIterator[None]:
    yield
    await lsp_client.shutdown_session()
