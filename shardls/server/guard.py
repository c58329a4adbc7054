"""Handlers that cannot take the server down: a failure is logged (to the log and to the client's
window/logMessage) and the request is answered with an empty result, so one bug in one feature
costs the user that one answer and the server keeps serving.

For the tests of this very behaviour, the environment variable FAIL_ENV lists methods
(comma-separated, e.g. `textDocument/hover`) whose handlers raise on purpose.
"""

from __future__ import annotations

import asyncio
import logging
import os
import traceback
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer

FAIL_ENV = "SHARDLS_TEST_FAIL"

P = TypeVar("P")
R = TypeVar("R")
E = TypeVar("E")

logger = logging.getLogger("shardls.server")


def handler(
    server: LanguageServer, method: str, empty: E, options: Any | None = None
) -> Callable[[Callable[[P], Awaitable[R]]], Callable[[P], Awaitable[R]]]:
    """Register an async feature handler for `method` that answers `empty` when it fails."""

    def register(function: Callable[[P], Awaitable[R]]) -> Callable[[P], Awaitable[R]]:
        async def guarded(params: P) -> R | E:
            try:
                if method in os.environ.get(FAIL_ENV, "").split(","):
                    raise RuntimeError(f"{method} failed on purpose ({FAIL_ENV} is set)")
                return await function(params)
            except asyncio.CancelledError:
                raise
            except Exception as error:
                report_failure(server, method, error)
                return empty

        server.feature(method, options)(guarded)
        return function

    return register


def background(
    server: LanguageServer, what: str, job: Callable[[], Awaitable[object]]
) -> Callable[[], Awaitable[None]]:
    """A job no request waits for (publishing, refresh requests): its failure is reported the same way."""

    async def run() -> None:
        try:
            await job()
        except asyncio.CancelledError:
            raise
        except Exception as error:
            report_failure(server, what, error)

    return run


def report_failure(server: LanguageServer, what: str, error: BaseException) -> None:
    """Log a failure with its traceback, and tell the client (its output panel, not a popup)."""
    logger.error("%s failed", what, exc_info=error)
    trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    server.window_log_message(
        types.LogMessageParams(types.MessageType.Error, f"shardls: {what} failed: {error}\n{trace}")
    )
