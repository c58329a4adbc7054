"""Answers about a syntax tree node, kept while the node lives.

`functools.lru_cache` keyed by nodes keeps them alive, and with them the whole tree of their
segment: a language server's session makes a new tree of every statement edited, and a cache of
8,192 functions held that many old trees. These answers go with their nodes instead.
"""

from __future__ import annotations

import ast
import functools
import weakref
from collections.abc import Callable
from typing import TypeVar

Node = TypeVar("Node", bound=ast.AST)
Answer = TypeVar("Answer")
Entry = TypeVar("Entry")


def per_node(function: Callable[[Node], Answer]) -> Callable[[Node], Answer]:
    """`function`, its answer for each node kept for as long as the node lives (by the node's
    id, checked against a weak reference: a lookup is one dictionary access, as with
    `lru_cache`; the entry goes when the node does)."""
    kept: dict[int, tuple[weakref.ref[Node], Answer]] = {}

    @functools.wraps(function)
    def answer(node: Node) -> Answer:
        entry = kept.get(id(node))
        if entry is not None and entry[0]() is node:
            return entry[1]
        found = function(node)
        kept[id(node)] = (weakref.ref(node, functools.partial(_forget, kept, id(node))), found)
        return found

    return answer


def _forget(kept: dict[int, Entry], key: int, _: object) -> None:
    kept.pop(key, None)
