"""Work that waits for a quiet moment: a burst of edits costs one analysis, not one per keystroke.

Each job has a key (a document's URI); scheduling a key again cancels the job still waiting or
running under it, so only work for the latest version of a document is ever finished.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class Debouncer:
    def __init__(self, delay: float) -> None:
        self.delay = delay
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def schedule(self, key: str, job: Callable[[], Awaitable[None]], delay: float | None = None) -> None:
        """Run `job` after `delay` seconds (default: the debouncer's) unless rescheduled meanwhile."""
        self.cancel(key)
        self._tasks[key] = asyncio.ensure_future(self._run(key, job, self.delay if delay is None else delay))

    def cancel(self, key: str) -> None:
        task = self._tasks.pop(key, None)
        if task is not None:
            task.cancel()

    def cancel_all(self) -> None:
        for key in list(self._tasks):
            self.cancel(key)

    async def _run(self, key: str, job: Callable[[], Awaitable[None]], delay: float) -> None:
        try:
            await asyncio.sleep(delay)
            await job()
        finally:
            if self._tasks.get(key) is asyncio.current_task():
                del self._tasks[key]
