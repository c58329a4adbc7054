"""What an edit leaves behind is freed by reference counting, not by the cyclic collector: the
server freezes what its analyses keep and collects in full only now and then, so a module
version the workspace drops (each edit drops one), or an analysis's walker and evaluator, left
in a cycle would stay until then (~22,000 objects per Enter in a 20k-line file). Counted in
objects the collector finds unreachable, never timed."""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from shardls.analysis.analyzer import Analyzer

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from generate_models import model_source

PATH = "/virtual/model.py"

HELPERS = """

def place(rows, cols=16):
    return jax.device_put(jnp.zeros((rows, cols)), NamedSharding(mesh, P("data", None)))


class Config:
    def __init__(self, width: int = 64):
        self.width = width

    def sharding(self):
        return NamedSharding(mesh, P(None, "model"))


a = place(8)
b = jax.device_put(jnp.zeros((Config().width, 8)), Config().sharding())
"""


@pytest.fixture
def collector_off() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _edits(text: str) -> list[str]:
    """An Enter near the top, its undo as the whole text, a number changed, and back."""
    lines = text.split("\n")
    entered = "\n".join(lines[:10] + [""] + lines[10:])
    changed = text.replace("(8)", "(9)", 1)
    return [entered, text, changed, text, entered, text]


def test_edits_enters_and_whole_text_undos_leave_no_cycles(collector_off: None) -> None:
    text = model_source(400) + HELPERS
    analyzer = Analyzer()
    analyzer.analyze(PATH, text).index_lines()
    gc.collect()
    for edited in _edits(text):
        analyzer.analyze(PATH, edited).index_lines()
        assert gc.collect() == 0


def test_a_dropped_module_version_is_freed_with_its_scopes(collector_off: None) -> None:
    text = model_source(200) + HELPERS
    analyzer = Analyzer()
    analyzer.analyze(PATH, text)
    first = weakref.ref(analyzer.workspace.module(PATH, text))
    scope = weakref.ref(first().scope)  # type: ignore[union-attr]
    for edited in _edits(text):
        analyzer.analyze(PATH, edited)
    assert first() is None
    assert scope() is None


def test_a_released_module_makes_its_scope_again_when_asked() -> None:
    """Something still holding a dropped version gets the same answers, made again."""
    text = model_source(200) + HELPERS
    analyzer = Analyzer()
    analyzer.analyze(PATH, text)
    module = analyzer.workspace.module(PATH, text)
    bindings = {name: [b.line for b in found] for name, found in module.scope.bindings.items()}
    calls = dict(module.call_index)
    module.release()
    assert "module_scope" not in vars(module)
    assert {name: [b.line for b in found] for name, found in module.scope.bindings.items()} == bindings
    assert module.call_index == calls
