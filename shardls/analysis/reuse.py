"""Work done once per analysis and reused: the contexts a function's body runs in.

The walker needs, for every function it reaches, the contexts its body runs in (the bindings of
its parameters at each visible call, and the caller's mesh and rules), which it finds by walking
the callers and evaluating their arguments. The same function is reached again and again: by
every pass over the file (the mesh pass, the sites, the typing pass), by every segment whose
caller search walks the segment that defines it, and once per context of an enclosing function.
Each time the callers were walked and their arguments evaluated anew, and since each search
made fresh frames, nothing below it was memoised either (`Evaluator.binding_value` keys by the
frame's locals). Here the answer is kept per distinct question, so the callers are walked once
and later walks reuse the very same frames (whose memoised bindings then hold too).

A kept answer must be what computing it again would give, and must leave the same traces:

- what computing it read (module-level names, imported modules, searched callees: `Reads`,
  which key the incremental cache of each segment) is noted again on every reuse;
- the sharded-type events it recorded are replayed, as `Evaluator.binding_value` does;
- an answer computed while any budget ran out (`Evaluator.exhausted`) may be incomplete, and
  is not kept: a later question with budget to spare computes it fully.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from shardls.analysis.evaluator import Evaluator, Frame, Reads
from shardls.analysis.sharded.events import TypeEvent
from shardls.stored_init import stored_init

T = TypeVar("T")


@stored_init
@dataclass(frozen=True)
class _Kept(Generic[T]):
    value: T
    reads: Reads
    events: tuple[TypeEvent, ...]
    alive: tuple[object, ...]
    """The objects whose ids the key uses, kept alive so that no id is reused meanwhile."""


@stored_init
@dataclass(frozen=True)
class _Placed:
    """A function's kept value (`Reuse.answer_anywhere`) and the call depths it holds at."""

    kept: _Kept[object]
    depth: int
    """The call depth it was computed at."""
    reach: int
    """How much deeper than `depth` its deepest check of the call-depth limit was."""
    cut: bool
    """A check reached the limit: the value holds at `depth` only."""

    def holds_at(self, depth: int, limit: int) -> bool:
        return depth == self.depth if self.cut else depth + self.reach < limit


class Hashed:
    """A key whose hash is computed once (`TypeError` here when it has none). A function's value
    is kept by its arguments (`evaluation/calls._returned_once`), whose hash is a walk of every
    value they hold; `Reuse.answer_anywhere` looks a key up alone and within a tuple of the
    evaluation state, which hashed the arguments three times per call (1 % of a check of
    jax-llm-examples). Equal when their keys are."""

    __slots__ = ("key", "_hash")

    def __init__(self, key: Hashable) -> None:
        self.key = key
        self._hash = hash(key)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hashed) and self._hash == other._hash and self.key == other.key


class Reuse:
    """The answers kept for one evaluator (one file's analysis)."""

    def __init__(self, evaluator: Evaluator) -> None:
        self._evaluator = weakref.ref(evaluator)
        self._kept: dict[Hashable, _Kept[object]] = {}
        self._placed: dict[Hashable, list[_Placed]] = {}
        self.hits = 0
        self.misses = 0

    def answer(self, key: Hashable, alive: tuple[object, ...], compute: Callable[[], T]) -> T:
        """`compute()`, or what it gave for the same `key` before. The key must name everything
        the answer depends on (by id for objects kept in `alive`)."""
        evaluator = self._evaluator()
        assert evaluator is not None
        kept = self._kept.get(key)
        if kept is not None:
            return cast(T, self._reused(evaluator, kept))
        value, keep = self._computed(evaluator, alive, compute)
        if keep is not None:
            self._kept[key] = keep
        return value

    def answer_anywhere(
        self, key: Hashable, depth: int, alive: tuple[object, ...], compute: Callable[[], T]
    ) -> T:
        """`answer` for a function's value computed at call depth `depth`, which may read the
        evaluator's state (`Evaluator.state`: the context mesh, whether the code is traced, the
        walker's context) and check the call-depth limit, neither named by `key`. It is kept by
        `key` and that state when it read it, else by `key` alone for every state; and for every
        depth where its checks of the limit stay within it, or for `depth` only when one did not
        (`_Placed`). The same call evaluated in each context and at each depth its callers are
        walked in (each call site of a `jit`, each pass over the file) was evaluated again in
        each, though only typed operations, Flax layers and logical rules read the state, and
        only a chain of calls reaching the limit depends on the depth. An answer kept per state
        counts as a read of it, and a reused one as the checks it made."""
        evaluator = self._evaluator()
        assert evaluator is not None
        state = evaluator.state
        in_state = (key, state.tracing, id(state.context_mesh), id(state.context))
        limit = evaluator.limits.call_depth
        for stored, read in ((in_state, True), (key, False)):
            for placed in self._placed.get(stored, ()):
                if placed.holds_at(depth, limit):
                    evaluator.state_read = evaluator.state_read or read
                    evaluator.deepest = max(evaluator.deepest, depth + placed.reach)
                    return cast(T, self._reused(evaluator, placed.kept))
        outer = evaluator.state_read, evaluator.deepest
        evaluator.state_read, evaluator.deepest = False, -1
        try:
            value, keep = self._computed(evaluator, (*alive, state), compute)
        finally:
            read, deepest = evaluator.state_read, evaluator.deepest
            evaluator.state_read, evaluator.deepest = outer[0] or read, max(outer[1], deepest)
        if keep is not None:
            placed = _Placed(keep, depth, deepest - depth, deepest >= limit)
            self._placed.setdefault(in_state if read else key, []).append(placed)
        return value

    def _reused(self, evaluator: Evaluator, kept: _Kept[object]) -> object:
        self.hits += 1
        if evaluator.reads is not None:
            evaluator.reads.add(kept.reads)
        if evaluator.typing is not None and kept.events:
            evaluator.typing.replay(kept.events)
        return kept.value

    def _computed(
        self, evaluator: Evaluator, alive: tuple[object, ...], compute: Callable[[], T]
    ) -> tuple[T, _Kept[object] | None]:
        """`compute()`, and what to keep of it (None when a budget ran out meanwhile)."""
        self.misses += 1
        outer, inner = evaluator.reads, Reads()
        recorder = evaluator.typing
        mark = recorder.mark() if recorder is not None else 0
        exhausted = evaluator.exhausted
        evaluator.reads = inner
        try:
            value = compute()
        finally:
            evaluator.reads = outer
            if outer is not None:
                outer.add(inner)
        if evaluator.exhausted != exhausted:
            return value, None
        events = recorder.since(mark) if recorder is not None else ()
        # Not `_Kept[object](...)`: the alias sets `__orig_class__` on the frozen instance, which
        # raises, and the exception is caught, at every answer computed.
        kept: _Kept[object] = _Kept(value, inner, events, alive)
        return value, kept


def frame_key(frame: Frame) -> tuple[int, int, int, int | None, int, int, tuple[str, int] | None]:
    """A frame by the identity of what it holds (the frame must be kept alive with the key):
    its locals by identity too, as `Evaluator.binding_value` memoises by them."""
    return (
        id(frame.module),
        id(frame.scope),
        id(frame.segment),
        frame.position,
        frame.call_depth,
        id(frame.locals) if frame.locals else 0,
        frame.runs_at,
    )


_REUSES: weakref.WeakKeyDictionary[Evaluator, Reuse] = weakref.WeakKeyDictionary()


def reuse_of(evaluator: Evaluator) -> Reuse:
    """The answers kept for `evaluator` (they live as long as it does)."""
    found = _REUSES.get(evaluator)
    if found is None:
        found = _REUSES[evaluator] = Reuse(evaluator)
    return found
