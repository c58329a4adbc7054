"""A wrapper call's arguments are evaluated once per call, frame and evaluation state
(`recognizers/wrapped.py`, `_wrapper_arguments`): the walker asks for the applications of a
function in every context and at every depth it reaches it, and the context does not change what
the decorator's arguments are where they are written."""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest
from analysis_helpers import analyze

from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.facts import SiteKind
from shardls.analysis.reuse import frame_key
from shardls.analysis.values import Value

SOURCE = textwrap.dedent(
    """
    import jax
    import jax.numpy as jnp
    from functools import partial
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh((2, 4), ('data', 'model'), axis_types=(jax.sharding.AxisType.Auto,) * 2)

    @partial(jax.shard_map, mesh=mesh, in_specs=P('data'), out_specs=P('data'))
    def inner(y):
        return jax.lax.with_sharding_constraint(y * 2, P('data'))

    def block(x, scale):
        return inner(x) * scale

    def model(x):
        x = block(x, 2)
        return block(x, 3)

    x = jax.device_put(jnp.zeros((8, 16)), NamedSharding(mesh, P('data')))
    y = model(x)
    """
)


def _asked_by_the_walker() -> bool:
    """Whether the walker asks (for the applications of a function), not a recognizer."""
    caller = sys._getframe(2)
    for _ in range(6):
        if caller.f_code.co_name == "_applied":
            return True
        caller = caller.f_back  # type: ignore[assignment]
    return False


def test_a_decorators_arguments_are_evaluated_once_per_frame_and_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[tuple[object, ...]] = []
    frames: list[object] = []  # alive, so that no id in a key is reused meanwhile
    call_arguments = Evaluator.call_arguments

    def recording(self: Evaluator, call: ast.Call, frame: Frame) -> tuple[list[Value], dict[str, Value]]:
        if ast.unparse(call.func) == "partial" and _asked_by_the_walker():
            frames.append((frame, self.state))
            state = self.state
            asked.append(
                (id(self), frame_key(frame), state.tracing, id(state.context_mesh), id(state.context))
            )
        return call_arguments(self, call, frame)

    monkeypatch.setattr(Evaluator, "call_arguments", recording)
    analysis = analyze(SOURCE)
    assert asked and len(asked) == len(set(asked))
    ins = {s.shape for s in analysis.sites if s.kind is SiteKind.SHARD_MAP_IN}
    assert (8, 16) in ins  # the calls still meet the body with their arrays
