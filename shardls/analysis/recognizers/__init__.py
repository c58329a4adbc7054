"""Recognizers turn library calls into sites; each module registers the calls it understands."""

from __future__ import annotations

_loaded = False


def load() -> None:
    """Import every recognizer module once (registration happens at import)."""
    global _loaded
    if _loaded:
        return
    from shardls.analysis.recognizers import (  # noqa: F401
        cond_branches,
        jit,
        linen,
        linen_modules,
        meshes,
        method_calls,
        placement,
        shard_map,
        transformed_calls,
        vmap,
    )
    from shardls.analysis.recognizers.nnx import param_sites, stacked_bodies  # noqa: F401

    _loaded = True
