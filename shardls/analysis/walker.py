"""Walking a module's code in the contexts it runs in.

A call inside a function is seen once per way the function is called (bound arguments, and the
mesh and logical-rule contexts of the caller), or once with its parameter defaults when no call
is visible. Context managers (`with jax.set_mesh(m):`, `with mesh:`, `with
nnx.logical_axis_rules(...)`) and global `jax.set_mesh(m)` statements are tracked on the way.

This module walks statements and functions and finds callers (the contexts their calls give a
function's body are in `walking/caller_contexts.py`); the contexts, which statements
run, the syntax of calls, which statements may hold a call, which a walk can skip
(`walking/pruning.py`) and the meshes a module sets are in
`analysis/walking/`. The rest of shardls imports the walker's names (`Walker`, `Visit`,
`Context`, ...) from here.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property

from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.evaluation.device_branches import devices_stated
from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.reuse import frame_key, reuse_of
from shardls.analysis.scopes import Scope
from shardls.analysis.source import Segment
from shardls.analysis.traced_decorators import body_traced, jitted_by_decorator, traced_by_decorator
from shardls.analysis.values import Value
from shardls.analysis.walking.call_mentions import CallMentions
from shardls.analysis.walking.call_syntax import (
    called_name,
    calls_in,
    first_arguments,
    target_name,
)
from shardls.analysis.walking.caller_contexts import MAX_CONTEXTS, caller_contexts
from shardls.analysis.walking.contexts import (
    UNKNOWN_CALLER,
    Context,
    MeshContext,
    Visit,
    argument_context,
    entered,
)
from shardls.analysis.walking.control_flow import (
    following,
    own_expressions,
    taken_blocks,
)
from shardls.analysis.walking.meshes import ModuleMeshes, set_in_turn
from shardls.analysis.walking.pruning import WalkPruning
from shardls.analysis.walking.text_tests import TextTest

MAX_CALLER_DEPTH = 2
STATEMENT_COST = 10
"""Evaluation steps one statement visit is charged (a visit costs about ten steps' time): the
budgets of `Limits` then bound the walk too. Real code visits 0.01-0.3 statements per character;
a test file of 8,000 lines in one class, whose nested functions are each walked again for every
caller, visited over a million before this bound."""


BodyContexts = Callable[["Walker", FunctionInfo, Frame, Context, int], list[tuple[dict[str, Value], Context]]]
"""How a function's body runs when something else calls it (e.g. `jax.shard_map`, whose body
sees per-device blocks): bindings of its parameters and the caller's context. It gets the frame and
context where the function is defined, and the caller search depth."""
_BODY_CONTEXTS: list[tuple[int, BodyContexts]] = []
_UNTRACED: set[BodyContexts] = set()
"""Providers whose bodies run as their callers do, not under a trace of their own."""


def body_contexts(rank: int, traced: bool = True) -> Callable[[BodyContexts], BodyContexts]:
    """Register a provider; the contexts it finds for a function replace those of its plain calls.
    Providers are asked by `rank`, lowest first, and the first that answers wins: never in the
    order their modules happened to be imported (the memory report imports `recognizers.nnx`
    first, which once changed the types inside `jax.vmap` bodies). `traced=False`: the body runs
    as its caller does (a Flax module's `__call__`), not under the provider's trace (`jit`)."""

    def register(provider: BodyContexts) -> BodyContexts:
        _BODY_CONTEXTS.append((rank, provider))
        _BODY_CONTEXTS.sort(key=lambda ranked: ranked[0])
        if not traced:
            _UNTRACED.add(provider)
        return provider

    return register


@dataclass(frozen=True)
class _Search:
    """What a walk is for: discovery (every call) or finding the callers of `callee`."""

    callee: str | None = None
    depth: int = 0


@dataclass
class Walker:
    """Finds a module's calls in the contexts they run in (see the module's docstring)."""

    evaluator: Evaluator
    module: ModuleInfo
    trigger: TextTest
    """Segments that do not match cannot contain a site."""
    calls: TextTest
    """Statements that do not match contain no call worth visiting (a cheap text test that
    saves walking most expressions)."""
    also: Callable[[Segment], bool] | None = None
    """Segments the trigger misses that are walked too (those that may compute typed arrays)."""
    on_statement: Callable[[ast.stmt, Frame, Context], None] | None = None
    """Called for every simple statement a discovery walk reaches, with its frame and context
    (the typing pass evaluates the arrays it computes)."""
    idle: Callable[[Context], bool] | None = None
    """Whether `on_statement` does nothing in a function entered from a context, whatever its
    callers' contexts (see `WalkPruning.unvisited`)."""
    inactive: Callable[[Context], bool] | None = None
    """Whether `on_statement` does nothing in a context (see `WalkPruning.quiet`)."""
    _mentions: CallMentions = field(init=False, repr=False)
    """Which statements may hold a call worth visiting, by the `calls` test."""
    _pruning: WalkPruning = field(init=False, repr=False)
    _triggered: dict[int, tuple[Segment, bool]] = field(default_factory=dict, init=False, repr=False)
    """Whether each segment matches `trigger`, by the segment (kept alive with the answer)."""

    def __post_init__(self) -> None:
        self._mentions = CallMentions(self.calls)
        self._pruning = self._pruned()

    def type_with(
        self,
        on_statement: Callable[[ast.stmt, Frame, Context], None],
        idle: Callable[[Context], bool],
        inactive: Callable[[Context], bool],
        also: Callable[[Segment], bool],
    ) -> None:
        """Hand discovery walks the typing pass's hooks, which are made after the walker (its
        meshes decide whether the file has Explicit axes); what the walks skip follows them."""
        self.on_statement, self.idle, self.inactive, self.also = on_statement, idle, inactive, also
        self._pruning = self._pruned()

    def _pruned(self) -> WalkPruning:
        # The meshes, not the walker: a walker holding a function that holds it is a cycle,
        # which kept each analysis's evaluator and its memos until a full collection.
        meshes = self.meshes
        return WalkPruning(
            self.evaluator,
            self._mentions,
            self.on_statement is not None,
            self.idle,
            self.inactive,
            lambda: bool(meshes.mesh_setters),
        )

    @cached_property
    def meshes(self) -> ModuleMeshes:
        """The meshes the module's statements make current (found once per walker)."""
        return ModuleMeshes(self.evaluator, self.module)

    def visits(self, segments: Iterable[Segment] | None = None) -> Iterator[Visit]:
        """Every call in the given segments (default: all segments that match the trigger)."""
        chosen = self.module.source.segments if segments is None else segments
        yield from self._segments([s for s in chosen if self.wanted(s)], _Search())

    def member_visits(self, segment: Segment, member: ast.stmt) -> Iterator[Visit]:
        """Every call in one statement of the body of the class that is the segment's only
        statement, as the walk of the whole segment visits them (`method_units`)."""
        (cls,) = segment.body
        assert isinstance(cls, ast.ClassDef)
        frame = Frame(self.module, self.module.scope, segment, None)
        context = Context(meshes=self.meshes.current_at(segment))
        yield from self._class_body(cls, frame, context, self.module.scope, (member,), _Search())

    def wanted(self, segment: Segment) -> bool:
        """Whether the segment may hold a site (or, with `also`, what else a pass looks for)."""
        kept = self._triggered.get(id(segment))
        if kept is None:  # asked by every pass over the segment: its text is searched once
            kept = self._triggered[id(segment)] = (segment, bool(self.trigger.search(segment.text)))
        return kept[1] or (self.also is not None and self.also(segment))

    def _segments(self, segments: Iterable[Segment], search: _Search) -> Iterator[Visit]:
        scope = self.module.scope
        for segment in segments:
            if segment.body:
                frame = Frame(self.module, scope, segment, None)
                base = Context(meshes=self.meshes.current_at(segment))
                yield from self._statements(segment.body, frame, base, scope, search)

    # -- statements --------------------------------------------------------------------------

    def _statements(
        self,
        body: list[ast.stmt] | tuple[ast.stmt, ...],
        frame: Frame,
        context: Context,
        scope: Scope,
        search: _Search,
    ) -> Iterator[Visit]:
        for index, stmt in enumerate(body):
            if not self.evaluator.spend(STATEMENT_COST):
                return  # the statement's or file's budget is used up: the rest is not walked
            here = Frame(
                frame.module,
                frame.scope,
                frame.segment,
                scope.order_of.get(id(stmt)),
                frame.locals,
                frame.call_depth,
                runs_at=frame.runs_at,
            )
            if search.callee is not None and self._pruning.unseen(stmt, frame.segment, search.callee):
                after = self._pruning.after_unwalked(stmt, here, self._with_mesh_set(stmt, here, context))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in stmt.decorator_list:  # `@partial(jax.jit, ...)` runs where `def` is
                    yield from self._calls(decorator, stmt, here, context)
                yield from self._function(stmt, frame, context, scope, search)
                continue
            elif isinstance(stmt, ast.ClassDef):
                yield from self._class_body(stmt, frame, context, scope, stmt.body, search)
                continue
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                inner = context
                for item in stmt.items:
                    yield from self._calls(item.context_expr, stmt, here, context)
                    with devices_stated(self.evaluator, context.branches, context.count):
                        inner = entered(self.evaluator, item.context_expr, here, inner)
                yield from self._statements(stmt.body, frame, inner, scope, search)
                continue
            else:
                if self.on_statement is not None and search.callee is None:
                    self.on_statement(stmt, here, context)
                if self._mentions.may_call(stmt, frame.segment, search.callee):
                    for expression in own_expressions(stmt):
                        yield from self._calls(expression, stmt, here, context)
                context = self._with_mesh_set(stmt, here, context)
                if search.callee is None and self._pruning.quiet(stmt, frame.segment, context):
                    after = self._pruning.after_unwalked(stmt, here, context)
                else:
                    blocks = taken_blocks(self.evaluator, stmt, here, context)
                    for block, inner in blocks:
                        yield from self._statements(block, frame, inner, scope, search)
                    after = following(self.evaluator, stmt, blocks, here, context)
            if len(after) != 1:  # what follows does not run here, or runs once per device count
                for each in after:
                    yield from self._statements(body[index + 1 :], frame, each, scope, search)
                return
            context = after[0]

    def _with_mesh_set(self, stmt: ast.stmt, frame: Frame, context: Context) -> Context:
        """The context of the statements after `stmt`, with the mesh it sets, if any."""
        with devices_stated(self.evaluator, context.branches, context.count):
            mesh = self.meshes.set_by(stmt, frame)
        if mesh is None:
            return context
        mesh = replace(mesh, in_turn=set_in_turn(self.meshes.global_meshes))
        return replace(context, meshes=context.meshes + (mesh,))

    def _class_body(
        self,
        node: ast.ClassDef,
        frame: Frame,
        context: Context,
        scope: Scope,
        body: list[ast.stmt] | tuple[ast.stmt, ...],
        search: _Search,
    ) -> Iterator[Visit]:
        """The statements `body` of the body of a class defined in `scope`, in the class's scope."""
        cls = self.evaluator.class_info(node, self.module, frame.segment, scope)
        class_frame = Frame(self.module, cls.scope, frame.segment, None, {}, frame.call_depth)
        yield from self._statements(body, class_frame, context, cls.scope, search)

    def _calls(self, expression: ast.AST, stmt: ast.stmt, frame: Frame, context: Context) -> Iterator[Visit]:
        target = target_name(stmt)
        value = getattr(stmt, "value", None)
        for node, parent in calls_in(expression):
            inner = argument_context(self.evaluator, node, parent, frame, context)
            yield Visit(node, frame, inner, stmt, target if node is value else None, parent)

    # -- functions ---------------------------------------------------------------------------

    def _function(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        frame: Frame,
        context: Context,
        scope: Scope,
        search: _Search,
    ) -> Iterator[Visit]:
        if search.callee is not None and not self._mentions.may_call(node, frame.segment, search.callee):
            return
        if search.callee is None and self._pruning.unvisited(node, frame.segment, context):
            return  # no call in it is worth visiting (`calls`): its callers need not be searched
        info = self.evaluator.function_info(node, self.module, frame.segment, scope, scope.owner)
        inside_jit = context.inside_jit or jitted_by_decorator(node)
        depth = search.depth + (1 if search.callee is not None else 0)
        by_provider, contexts = self._body_contexts(info, frame, context, depth)
        decorated = traced_by_decorator(node)
        for locals_, caller in contexts[:MAX_CONTEXTS]:
            traced = body_traced(decorated, by_provider or inside_jit or caller.inside_jit, caller.traced)
            inner_context = replace(
                caller,
                meshes=context.meshes + caller.meshes,
                rules=context.rules + caller.rules,
                inside_function=True,
                inside_jit=inside_jit or caller.inside_jit,
                traced=traced,
            )
            inner = Frame(
                self.module,
                info.scope,
                frame.segment,
                None,
                locals_,
                frame.call_depth + 1,
                runs_at=caller.runs_at,
            )
            yield from self._statements(
                node.body, inner, inner_context, info.scope, _Search(search.callee, depth)
            )

    def _body_contexts(
        self, info: FunctionInfo, frame: Frame, context: Context, depth: int
    ) -> tuple[bool, list[tuple[dict[str, Value], Context]]]:
        """The contexts the function's body runs in, and whether it runs traced because a
        provider (`body_contexts`) gave them. Found once per distinct question and reused
        (`analysis/reuse.py`): the same function is reached by every pass and by every caller
        search that walks its segment."""

        def find() -> tuple[bool, list[tuple[dict[str, Value], Context]]]:
            provided, traced = self._provided_contexts(info, frame, context, depth)
            return traced, provided or caller_contexts(self, info, depth) or [({}, UNKNOWN_CALLER)]

        key = ("contexts", id(info.node), id(self.module), frame_key(frame), context, depth)
        try:
            hash(key)
        except TypeError:  # a context holding an unhashable value: found afresh
            return find()
        return reuse_of(self.evaluator).answer(key, (info, self.module, frame), find)

    def _provided_contexts(
        self, info: FunctionInfo, frame: Frame, context: Context, depth: int
    ) -> tuple[list[tuple[dict[str, Value], Context]], bool]:
        """The contexts the first provider that answers gives, and whether the body runs traced."""
        if depth > MAX_CALLER_DEPTH:
            return [], False
        for _, provider in _BODY_CONTEXTS:
            found = provider(self, info, frame, context, depth)
            if found:
                return found, provider not in _UNTRACED
        return [], False

    def called_body(
        self,
        info: FunctionInfo,
        locals_: dict[str, Value],
        context: Context,
        call_depth: int,
        enclosing: Frame | None = None,
    ) -> Iterator[Visit]:
        """Every call in the body of a function of this module as one call from another module
        (or of a lambda helper, `enclosing` the call it was made in) runs it: its parameters
        bound to that call's arguments, in the caller's context (`analysis/foreign_calls.py`)."""
        frame = Frame(
            self.module,
            info.scope,
            info.segment,
            None,
            locals_,
            call_depth,
            enclosing,
            runs_at=context.runs_at,
        )
        yield from self._statements(info.node.body, frame, context, info.scope, _Search())

    def calls_named(self, name: str, depth: int) -> list[Visit]:
        """The calls `name(...)` and `x.name(...)` in this module, in the contexts they run in;
        none when callers are already searched `MAX_CALLER_DEPTH` deep. Found once per analysis
        (`analysis/reuse.py`): the search does not depend on who asks, and the same name is
        searched by each function of that name (a test file's many `class Foo` and `def f`), by
        each provider, and by every pass."""
        if depth > MAX_CALLER_DEPTH:
            return []

        def search() -> list[Visit]:
            if self.evaluator.reads is not None:
                self.evaluator.reads.callees.add(name)
            segments = self.module.source.segments
            callers = [segments[i] for i in self.module.call_index.get(name, ())]
            found = self._segments(callers, _Search(name, depth))
            return [visit for visit in found if called_name(visit.call) == name]

        key = ("calls", id(self.module), name, depth)
        return reuse_of(self.evaluator).answer(key, (self.module,), search)


__all__ = [
    "MAX_CALLER_DEPTH",
    "MAX_CONTEXTS",
    "STATEMENT_COST",
    "UNKNOWN_CALLER",
    "BodyContexts",
    "Context",
    "MeshContext",
    "Visit",
    "Walker",
    "body_contexts",
    "first_arguments",
    "target_name",
]
