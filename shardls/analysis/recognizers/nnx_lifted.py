"""Flax's lifted transforms (`nnx.jit`, `nnx.jit_partial`, `nnx.shard_map`) as the jit and
shard_map recognizers see them: a module passed or returned is its state, so that the pairing of
`wrapped.py` lays it out variable by variable (`library/nnx_prefix.py`); other wrappers' values
are left as they are.
"""

from __future__ import annotations

from dataclasses import replace

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.library.nnx_prefix import graph_states
from shardls.analysis.library.transforms import JIT_PARTIAL
from shardls.analysis.recognizers.wrapped import Application, CallSite
from shardls.analysis.values import Value

NNX_APIS = ("flax.nnx.jit", JIT_PARTIAL, "flax.nnx.shard_map")


def nnx_site(evaluator: Evaluator, app: Application, site: CallSite) -> CallSite:
    """The call as an NNX transform lays out its arguments: each module as its variables."""
    if app.api not in NNX_APIS:
        return site
    frame = site.visit.frame
    return replace(site, args=[graph_states(evaluator, frame, value) or value for value in site.args])


def nnx_result(evaluator: Evaluator, app: Application, result: Value, frame: Frame) -> Value:
    """What an NNX transform returns, as its out_shardings lay it out (a module as its variables)."""
    return (graph_states(evaluator, frame, result) or result) if app.api in NNX_APIS else result
