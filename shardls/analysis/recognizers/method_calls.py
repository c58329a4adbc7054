"""How the methods of a plain class run: with `self` the instance the code calls them on.

A function's body runs once per visible call with its arguments bound (`walking/caller_contexts.py`),
but a method is called through an instance (`helper.put(x)`, `self._shard(x)` in another
method), which that search does not bind: without this, `self.mesh` and `x` in the body would be
unknown. Each call whose callee evaluates to this very method bound to an instance gives one
context, `self` being that instance (its constructor's arguments, as built where the code
builds it).

A test method nobody in the code calls (`unittest` runs it) gets the instance the runner builds:
the class itself, set up by its `setUp` (`ClassInfo.self_assignments`), every other parameter
unknown. Any other method with no visible call keeps the walker's default (unknown `self`), since
a subclass built elsewhere may have other attributes.

Registered at import (`recognizers.load`), after the providers of Flax modules and transforms.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace

from shardls.analysis.definitions import ClassInfo, FunctionInfo
from shardls.analysis.evaluator import Frame
from shardls.analysis.reuse import frame_key, reuse_of
from shardls.analysis.values import FunctionV, InstanceV, Value, options
from shardls.analysis.walker import MAX_CONTEXTS, UNKNOWN_CALLER, Context, Visit, Walker, body_contexts

_BUILDERS = ("__init__", "__post_init__", "setup", "setUp")
"""Methods that build the instance: the walker binds constructors itself, and `setUp`'s `self`
is the test's instance like any test method's."""

MAX_SEARCH_DEPTH = 1
"""How deep in a caller search the calls of a method are searched in turn: for the code the file
runs and one level up (`self.put(x)` in a method the file calls). Deeper, a class whose methods
call each other (flax's `Variable`) made every search for a function's callers search each
calling method's callers, and ran out of budget."""

TEST_CASE = "TestCase"
"""The last part of the name of `unittest.TestCase` and the classes derived from it that test
libraries export (`absltest.TestCase`, `parameterized.TestCase`, `chex.TestCase`)."""


@body_contexts(rank=4, traced=False)  # methods of plain classes: the instance they are called on
def method_bodies(
    walker: Walker, info: FunctionInfo, frame: Frame, context: Context, depth: int
) -> list[tuple[dict[str, Value], Context]]:
    owner = info.owner
    if owner is None or info.kind != "method" or not info.params or info.name in _BUILDERS:
        return []
    found: list[tuple[dict[str, Value], Context]] = []
    searched = _calls_on_instances(walker, info, depth) if depth <= MAX_SEARCH_DEPTH else []

    for visit, instance in searched:
        args, kwargs = walker.evaluator.call_arguments(visit.call, visit.frame)
        locals_ = walker.evaluator.bind_arguments(info, args, kwargs, instance, visit.frame)
        where = f"{info.name}(...) at line {visit.frame.line_of(visit.call) + 1}"
        found.append((locals_, replace(visit.context, call_site=where, runs_at=visit.frame.callee_runs_at())))
        if len(found) >= MAX_CONTEXTS:
            break
    if not found and is_test_case(walker, owner, frame):
        test = InstanceV(owner, ())
        found.append((walker.evaluator.bind_arguments(info, [], {}, test, frame), UNKNOWN_CALLER))
    return found


def _calls_on_instances(walker: Walker, info: FunctionInfo, depth: int) -> list[tuple[Visit, InstanceV]]:
    """The calls `x.name(...)` of this module whose callee is this method bound to an instance,
    with that instance (one per call: the first the callee may be)."""
    found: list[tuple[Visit, InstanceV]] = []
    segments = walker.module.source.segments
    if not any(
        info.name in _called_not_defined(segments[i].text)
        for i in walker.module.call_index.get(info.name, ())
    ):
        return found  # only its `def` names it (a test method): no caller to search for
    for visit in walker.calls_named(info.name, depth):
        for option in options(_callee(walker, visit)):
            if (
                isinstance(option, FunctionV)
                and option.func.node is info.node
                and isinstance(option.bound, InstanceV)
            ):
                found.append((visit, option.bound))
                break
    return found


_CALLED = re.compile(r"(\bdef\s+)?\b(\w+)\s*\(")


@functools.lru_cache(maxsize=20_000)
def _called_not_defined(text: str) -> frozenset[str]:
    """Names followed by `(` in a segment's text other than in `def name(`: the call index also
    holds every method's own name, whose search would walk the method again for nothing (each
    test method of a large test class once per caller depth). As many entries as the segments
    of the largest file (as `module_info`'s per-text caches): each method asks about every
    segment naming it, so a file of more segments than entries (the 20k-line model's 2,226)
    missed on every one, a regular-expression scan each, 120 s of a 20k-line cold open."""
    return frozenset(match[2] for match in _CALLED.finditer(text) if match[1] is None)


def _callee(walker: Walker, visit: Visit) -> Value:
    """What the call calls, evaluated once per call and frame (`analysis/reuse.py`): every
    method of that name in the module asks about the same calls."""
    key = ("method callee", id(visit.call), frame_key(visit.frame))
    return reuse_of(walker.evaluator).answer(
        key, (visit.call, visit.frame), lambda: walker.evaluator.evaluate(visit.call.func, visit.frame)
    )


def is_test_case(walker: Walker, owner: ClassInfo, frame: Frame) -> bool:
    """Whether the class derives from a test library's `TestCase`, whose methods the test
    runner calls on an instance of the class itself."""
    return any(q.rsplit(".", 1)[-1] == TEST_CASE for q in walker.evaluator.base_qualnames(owner, frame))
