"""One module per LSP feature, each registering its handlers with `register(server)`. `sync`
comes first: it handles `initialize`, which the others rely on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from shardls.server.features import (
    code_actions,
    code_lens,
    completion,
    definition,
    diagnostics,
    file_info,
    hover,
    inlay_hints,
    references,
    sync,
)

if TYPE_CHECKING:
    from shardls.server.server import ShardServer


class Feature(Protocol):
    """A feature module (modules satisfy protocols by their attributes)."""

    def register(self, server: ShardServer) -> None: ...


FEATURES: tuple[Feature, ...] = (
    sync,
    diagnostics,
    hover,
    inlay_hints,
    completion,
    code_actions,
    definition,
    references,
    file_info,
    code_lens,
)
