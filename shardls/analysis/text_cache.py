"""What was found from a text, kept by that text while it is among the latest used.

An edit leaves most of a file's segments' texts as they were, so what was found from each (its
tree, its comments, what its literals could make) is looked up by text rather than found again.
Bounded by entries and by the characters of the texts kept, since old versions of a long
statement are each as long as it."""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

V = TypeVar("V")


class TextCache(Generic[V]):
    """A least-recently-used map from texts to what was found from them."""

    def __init__(self, most: int, chars: int) -> None:
        self._found: OrderedDict[str, V] = OrderedDict()
        self._most = most
        self._limit = chars
        self._chars = 0

    def get(self, text: str) -> V | None:
        found = self._found.get(text)
        if found is not None:
            self._found.move_to_end(text)
        return found

    def discard(self, text: str) -> None:
        """Forget what was found from `text` (kept for a file no longer wanted)."""
        if self._found.pop(text, None) is not None:
            self._chars -= len(text)

    def put(self, text: str, found: V) -> V:
        """Keep `found` for `text`, dropping the least recently used beyond the bounds (never the
        entry just kept)."""
        if text not in self._found:
            self._chars += len(text)
        self._found[text] = found
        self._found.move_to_end(text)
        while len(self._found) > 1 and (len(self._found) > self._most or self._chars > self._limit):
            dropped, _ = self._found.popitem(last=False)
            self._chars -= len(dropped)
        return found
