"""Work the analysis does once and reuses (analysis/reuse.py, the evaluator's memos) gives what
doing it again would: per call, per frame, per context, per evaluation state where it was read,
per call depth where the depth limit was reached, and across an incremental re-analysis."""

from __future__ import annotations

import textwrap
from collections.abc import Callable

from analysis_helpers import analyze, site_named

from shardls.analysis import walker as walker_module
from shardls.analysis.analyzer import Analyzer
from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.file_settings import file_device_count, file_environment
from shardls.analysis.library import Library
from shardls.analysis.pragmas import Pragmas
from shardls.analysis.reuse import Hashed, Reuse
from shardls.analysis.settings import Settings
from shardls.analysis.walker import Context, Walker
from shardls.analysis.workspace import Workspace

HEADER = """\
import jax
import jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P

mesh = jax.make_mesh((2, 4), ('data', 'model'))
"""


def dims(site_shape: object) -> list[object]:
    return [getattr(dim, "value", dim) for dim in site_shape]  # type: ignore[attr-defined]


def test_two_calls_of_a_function_keep_their_own_arguments() -> None:
    """The locals of the first call are gone when the second is evaluated; a memo keyed by their
    identity must not answer the second with the first's values (it gave 6 x 6)."""
    source = HEADER + textwrap.dedent(
        """
        def doubled(n):
            m = n * 2
            return m

        a = doubled(3)
        b = doubled(5)
        x = jax.device_put(jnp.zeros((a, b)), NamedSharding(mesh, P('data')))
        """
    )
    site = site_named(analyze(source), "x")
    assert site.shape is not None
    assert dims(site.shape) == [6, 10]


def test_a_guarded_binding_is_decided_per_call() -> None:
    """`_reachable` is memoised like bindings: per call, never across calls."""
    source = HEADER + textwrap.dedent(
        """
        def rows(wide):
            if wide:
                n = 16
            else:
                n = 8
            return n

        x = jax.device_put(jnp.zeros((rows(True), rows(False))), NamedSharding(mesh, P('data')))
        """
    )
    site = site_named(analyze(source), "x")
    assert site.shape is not None
    assert dims(site.shape) == [16, 8]


CALLERS = HEADER + textwrap.dedent(
    """
    def place(rows):
        return jax.device_put(jnp.zeros((rows, 16)), NamedSharding(mesh, P('data')))

    def small():
        return place(6)

    def large():
        return place(12)

    one = small()
    two = large()
    """
)


def test_a_functions_contexts_are_found_once_and_give_every_caller(monkeypatch: object) -> None:
    """`place` is reached by several passes and caller searches; its callers are searched once
    per distinct question, and every call still gives its own site."""
    searched: list[str] = []
    call_contexts = walker_module.caller_contexts

    def counting(walker: Walker, info: object, depth: int) -> object:
        searched.append(f"{info.name}@{depth}")  # type: ignore[attr-defined]
        return call_contexts(walker, info, depth)  # type: ignore[arg-type]

    monkeypatch.setattr(walker_module, "caller_contexts", counting)  # type: ignore[attr-defined]
    analysis = analyze(CALLERS)
    assert sorted(dims(s.shape) for s in analysis.sites if s.shape is not None) == [[6, 16], [12, 16]]
    assert len(searched) == len(set(searched))


def test_reused_answers_note_what_they_read_for_the_incremental_cache() -> None:
    """Editing what only a reused answer read (the argument of `large`'s call) re-analyses the
    segments that used it: the edited analysis equals a fresh one."""
    analyzer = Analyzer()
    analyzer.analyze("/virtual/model.py", CALLERS)
    edited = CALLERS.replace("place(12)", "place(10)")
    again = analyzer.analyze("/virtual/model.py", edited)
    fresh = Analyzer().analyze("/virtual/model.py", edited)
    assert again.sites == fresh.sites
    assert sorted(dims(s.shape) for s in again.sites if s.shape is not None) == [[6, 16], [10, 16]]


def test_an_answer_computed_while_a_budget_ran_out_is_not_kept() -> None:
    class Counting:
        exhausted = 0
        reads = None
        typing = None

    evaluator = Counting()
    reuse = Reuse(evaluator)  # type: ignore[arg-type]
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        evaluator.exhausted += 1  # a statement's budget ran out meanwhile
        return len(calls)

    assert reuse.answer("key", (), compute) == 1
    assert reuse.answer("key", (), compute) == 2  # computed again: the first may be incomplete
    evaluator.exhausted = 0
    assert reuse.answer("other", (), lambda: 7) == 7
    assert reuse.answer("other", (), lambda: 8) == 7


def _evaluator() -> Evaluator:
    device_count = file_device_count(Pragmas(), Settings())
    return Evaluator(Workspace(), Library(file_environment(device_count, Settings())))


def test_an_answer_that_read_no_state_holds_in_every_state() -> None:
    """A function's value (`Reuse.answer_anywhere`) computed without reading the context mesh,
    the tracing or the walker's context is computed once for every state; one that read them is
    computed again in another state, and kept for that state."""
    evaluator = _evaluator()
    reuse = Reuse(evaluator)
    computed: list[str] = []

    def plain() -> str:
        computed.append("plain")
        return "plain"

    def traced() -> str:
        computed.append("traced")
        return f"traced={evaluator.tracing}"

    contexts = {False: Context(), True: Context(inside_jit=True)}
    for tracing in (False, True, False):
        evaluator.tracing = tracing
        evaluator.context = contexts[tracing]
        assert reuse.answer_anywhere("plain", 1, (), plain) == "plain"
        assert reuse.answer_anywhere("traced", 1, (), traced) == f"traced={tracing}"
    assert computed == ["plain", "traced", "traced"]


def test_an_answer_that_read_the_state_makes_its_callers_read_it() -> None:
    """A call inside the computation that read the state (computed or reused) makes the outer
    answer depend on the state too."""
    evaluator = _evaluator()
    reuse = Reuse(evaluator)
    outer_runs: list[bool | None] = []

    def inner() -> bool | None:
        return evaluator.tracing

    def outer() -> str:
        outer_runs.append(evaluator.state.tracing)
        return f"outer of {reuse.answer_anywhere('inner', 2, (), inner)}"

    evaluator.tracing = False
    assert reuse.answer_anywhere("inner", 2, (), inner) is False  # kept for tracing=False
    assert reuse.answer_anywhere("outer", 1, (), outer) == "outer of False"  # reads it through inner
    evaluator.tracing = True
    assert reuse.answer_anywhere("outer", 1, (), outer) == "outer of True"
    assert outer_runs == [False, True]


def test_an_answer_holds_at_every_depth_where_its_calls_stay_within_the_limit() -> None:
    """A function's value is computed again at another call depth only where a chain of calls
    inside it would reach the call-depth limit (12) there: one that checked the limit two levels
    down holds up to depth 9; one that reached the limit holds only at its own depth."""
    evaluator = _evaluator()
    reuse = Reuse(evaluator)
    computed: list[int] = []

    def nested(depth: int) -> Callable[[], str]:
        def compute() -> str:
            computed.append(depth)
            within = evaluator.within_call_depth(Frame(None, None, None, None, call_depth=depth + 2))  # type: ignore[arg-type]
            return "deep" if within else "cut"

        return compute

    assert reuse.answer_anywhere("f", 3, (), nested(3)) == "deep"
    assert reuse.answer_anywhere("f", 9, (), nested(9)) == "deep"  # reused: 11 < 12
    assert reuse.answer_anywhere("f", 10, (), nested(10)) == "cut"  # 12 reaches the limit
    assert reuse.answer_anywhere("f", 10, (), nested(10)) == "cut"  # reused at depth 10 only
    assert reuse.answer_anywhere("f", 11, (), nested(11)) == "cut"
    assert computed == [3, 10, 11]
    assert evaluator.deepest == 13  # the reused answers' checks count as made


class _CountedHash:
    """A key part that counts the times it is hashed (a function's arguments hash every value
    they hold)."""

    def __init__(self) -> None:
        self.hashed = 0

    def __hash__(self) -> int:
        self.hashed += 1
        return 1


def test_a_hashed_key_is_hashed_once_however_often_it_is_looked_up() -> None:
    """`answer_anywhere` looks a key up alone and within the evaluation state: a plain tuple was
    hashed three times per ask (`_returned_once`'s arguments), a `Hashed` key once, when made."""
    evaluator = _evaluator()
    reuse = Reuse(evaluator)
    part = _CountedHash()
    assert reuse.answer_anywhere(("f", part), 0, (), lambda: "value") == "value"
    assert part.hashed >= 3  # why keys are `Hashed`: each lookup hashes a tuple key whole again
    part.hashed = 0
    for _ in range(3):
        assert reuse.answer_anywhere(Hashed(("g", part)), 0, (), lambda: "value") == "value"
    assert part.hashed == 3  # once per key made, whatever it is looked up in
    assert Hashed(("g", part)) == Hashed(("g", part)) != Hashed(("h", part))
