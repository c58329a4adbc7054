"""Walking a module's code in the contexts it runs in.

A call inside a function is seen once per way the function is called (bound arguments, and the
mesh and logical-rule contexts of the caller), or once with its parameter defaults when no call
is visible. Context managers (`with jax.set_mesh(m):`, `with mesh:`, `with
nnx.logical_axis_rules(...)`) and global `jax.set_mesh(m)` statements are tracked on the way.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import cached_property

from shardls.analysis.evaluator import Evaluator, Frame, truthiness
from shardls.analysis.facts import Span
from shardls.analysis.reuse import frame_key, reuse_of
from shardls.analysis.scopes import (
    ClassInfo,
    FunctionInfo,
    ModuleInfo,
    Scope,
    jitted_by_decorator,
    traced_by_decorator,
)
from shardls.analysis.source import Segment
from shardls.analysis.values import ClassV, FunctionV, InstanceV, MeshV, Ref, Unknown, Value, options

MAX_CONTEXTS = 4
MAX_CALLER_DEPTH = 2
STATEMENT_COST = 10
"""Evaluation steps one statement visit is charged (a visit costs about ten steps' time): the
budgets of `Limits` then bound the walk too. Real code visits 0.01-0.3 statements per character;
a test file of 8,000 lines in one class, whose nested functions are each walked again for every
caller, visited over a million before this bound."""


@dataclass(frozen=True)
class MeshContext:
    """A mesh made current by `set_mesh`/`use_abstract_mesh` (or the deprecated `with mesh:`)."""

    mesh: MeshV
    how: str
    """e.g. `with jax.set_mesh(mesh) at line 12`."""
    span: Span
    legacy: bool = False
    in_turn: bool = False
    """Set by one of several different top-level `jax.set_mesh` statements (a tutorial's mesh per
    section): a function defined under it may well be called under another."""


@dataclass(frozen=True)
class RulesContext:
    rules: Value
    how: str
    linen: bool = False


@dataclass(frozen=True)
class Context:
    meshes: tuple[MeshContext, ...] = ()
    rules: tuple[RulesContext, ...] = ()
    inside_function: bool = False
    inside_jit: bool = False
    call_site: str | None = None
    """How the enclosing function was called, for provenance (`MLP(512, ...) at line 40`)."""
    stacked: Value | None = None
    """The `nnx.vmap`/`nnx.split_rngs` stacking of the enclosing function, if any."""
    eager_sharding: bool | None = None
    """`with nnx.use_eager_sharding(False):` (None: Flax's default, eager)."""
    traced: bool | None = False
    """Whether code here runs under a JAX trace (`jax.jit`, `shard_map`, `vmap`, ...) rather than
    eagerly; None when it may be either (a function with an unknown decorator or caller)."""
    unknown_caller: bool = False
    """Some function up the chain of calls has no visible caller (`Attention(...)` called in
    `Block.__init__`, which only another file builds): the mesh and rules in effect there are
    decided by code shardls cannot see, so their absence is no mistake."""

    @property
    def mesh(self) -> MeshContext | None:
        return self.meshes[-1] if self.meshes else None

    @property
    def spec_mesh(self) -> MeshContext | None:
        """The mesh a bare spec means here: `jax.set_mesh`'s, never a deprecated `with mesh:`."""
        mesh = self.mesh
        return mesh if mesh is not None and not mesh.legacy else None


UNKNOWN_CALLER = Context(inside_function=True, unknown_caller=True, traced=None)
"""The context of a function's body when none of its calls is visible."""


@dataclass(frozen=True)
class Visit:
    """One call, in one frame and context."""

    call: ast.Call
    frame: Frame
    context: Context
    statement: ast.stmt
    target: str | None
    """The name the call's result is assigned to (`self.up` -> `up`), for naming sites."""
    parent: ast.Call | None = None
    """The call this call is an argument of (`NamedSharding(...)` inside `device_put(...)`)."""


BodyContexts = Callable[["Walker", FunctionInfo, Frame, Context, int], list[tuple[dict[str, Value], Context]]]
"""How a function's body runs when something else calls it (e.g. `jax.shard_map`, whose body
sees per-device blocks): bindings of its parameters and the caller's context. It gets the frame and
context where the function is defined, and the caller search depth."""
_BODY_CONTEXTS: list[tuple[int, BodyContexts]] = []


def body_contexts(rank: int) -> Callable[[BodyContexts], BodyContexts]:
    """Register a provider; the contexts it finds for a function replace those of its plain calls.
    Providers are asked by `rank`, lowest first, and the first that answers wins: never in the
    order their modules happened to be imported (the memory report imports `recognizers.nnx`
    first, which once changed the types inside `jax.vmap` bodies)."""

    def register(provider: BodyContexts) -> BodyContexts:
        _BODY_CONTEXTS.append((rank, provider))
        _BODY_CONTEXTS.sort(key=lambda ranked: ranked[0])
        return provider

    return register


@dataclass(frozen=True)
class _Search:
    """What a walk is for: discovery (every call) or finding the callers of `callee`."""

    callee: str | None = None
    depth: int = 0


@dataclass
class Walker:
    evaluator: Evaluator
    module: ModuleInfo
    trigger: re.Pattern[str]
    """Segments that do not match cannot contain a site."""
    calls: re.Pattern[str]
    """Statements that do not match contain no call worth visiting (a cheap text test that
    saves walking most expressions)."""
    also: Callable[[Segment], bool] | None = None
    """Segments the trigger misses that are walked too (those that may compute typed arrays)."""
    on_statement: Callable[[ast.stmt, Frame, Context], None] | None = None
    """Called for every simple statement a discovery walk reaches, with its frame and context
    (the typing pass evaluates the arrays it computes)."""

    def visits(self, segments: Iterable[Segment] | None = None) -> Iterator[Visit]:
        """Every call in the given segments (default: all segments that match the trigger)."""
        chosen = self.module.source.segments if segments is None else segments
        yield from self._segments([s for s in chosen if self.wanted(s)], _Search())

    def wanted(self, segment: Segment) -> bool:
        """Whether the segment may hold a site (or, with `also`, what else a pass looks for)."""
        return bool(self.trigger.search(segment.text)) or (self.also is not None and self.also(segment))

    def _segments(self, segments: Iterable[Segment], search: _Search) -> Iterator[Visit]:
        scope = self.module.scope
        for segment in segments:
            if segment.body:
                frame = Frame(self.module, scope, segment, None)
                base = Context(meshes=self.meshes_current_at(segment))
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
        lines = frame.segment.lines
        for stmt in body:
            if not self.evaluator.spend(STATEMENT_COST):
                return  # the statement's or file's budget is used up: the rest is not walked
            here = Frame(
                frame.module,
                frame.scope,
                frame.segment,
                scope.order_of.get(id(stmt)),
                frame.locals,
                frame.call_depth,
            )
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in stmt.decorator_list:  # `@partial(jax.jit, ...)` runs where `def` is
                    yield from self._calls(decorator, stmt, here, context)
                yield from self._function(stmt, frame, context, scope, search)
            elif isinstance(stmt, ast.ClassDef):
                cls = self.evaluator.class_info(stmt, self.module, frame.segment, scope)
                class_frame = Frame(self.module, cls.scope, frame.segment, None, {}, frame.call_depth)
                yield from self._statements(stmt.body, class_frame, context, cls.scope, search)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                inner = context
                for item in stmt.items:
                    yield from self._calls(item.context_expr, stmt, here, context)
                    inner = self._enter(item.context_expr, here, inner)
                yield from self._statements(stmt.body, frame, inner, scope, search)
            else:
                if self.on_statement is not None and search.callee is None:
                    self.on_statement(stmt, here, context)
                text = "\n".join(lines[stmt.lineno - 1 : stmt.end_lineno])
                if (search.callee in text) if search.callee is not None else self.calls.search(text):
                    for expression in _own_expressions(stmt):
                        yield from self._calls(expression, stmt, here, context)
                mesh = self._mesh_set_by(stmt, here)
                if mesh is not None:
                    mesh = replace(mesh, in_turn=_in_turn(self.global_meshes))
                    context = replace(context, meshes=context.meshes + (mesh,))
                blocks = self._taken_blocks(stmt, here)
                for block in blocks:
                    yield from self._statements(block, frame, context, scope, search)
                if self._ends(stmt, here) or (
                    isinstance(stmt, ast.If) and len(blocks) == 1 and self._leaves(blocks[0], here)
                ):
                    return  # what follows does not run here

    def _taken_blocks(self, stmt: ast.stmt, frame: Frame) -> list[list[ast.stmt]]:
        """The nested blocks that can run: an `if` whose test is decided here runs one branch
        (`place(x, fsdp=True)` only reaches the `if fsdp:` body). A decided branch that raises
        or returns ends the block it is in (`if n * m != jax.device_count(): raise ...` guards
        the mesh below it)."""
        if isinstance(stmt, ast.If):
            truth = truthiness(self.evaluator.evaluate(stmt.test, frame))
            if truth is not None:
                return [stmt.body if truth else stmt.orelse]
        return _blocks(stmt)

    def _leaves(self, block: list[ast.stmt], frame: Frame) -> bool:
        """Whether running `block` always ends the function or the program."""
        return bool(block) and self._ends(block[-1], frame)

    def _ends(self, stmt: ast.stmt, frame: Frame) -> bool:
        """`raise`, `return`, or a call that never returns: `pytest.skip`/`fail`/`exit`,
        `sys.exit`, `self.skipTest`/`self.fail`, or a workspace helper that only raises
        (`_fail(msg)`). The code after it does not run there."""
        if isinstance(stmt, (ast.Raise, ast.Return)):
            return True
        if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
            return False
        func = stmt.value.func
        if isinstance(func, ast.Attribute) and func.attr in _TEST_CASE_EXITS:
            return isinstance(func.value, ast.Name) and func.value.id in ("self", "cls")
        if not _may_exit(func):
            return False
        for option in options(self.evaluator.evaluate(func, frame)):
            if isinstance(option, Ref) and option.qualname in _EXITS:
                return True
            if isinstance(option, FunctionV) and _only_raises(option.func.node):
                return True
        return False

    def _calls(self, expression: ast.AST, stmt: ast.stmt, frame: Frame, context: Context) -> Iterator[Visit]:
        target = target_name(stmt)
        value = getattr(stmt, "value", None)
        for node, parent in _calls_in(expression):
            yield Visit(node, frame, context, stmt, target if node is value else None, parent)

    # -- functions ---------------------------------------------------------------------------

    def _function(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        frame: Frame,
        context: Context,
        scope: Scope,
        search: _Search,
    ) -> Iterator[Visit]:
        if search.callee is not None and search.callee not in _node_text(frame.segment, node):
            return
        if (
            search.callee is None
            and self.on_statement is None
            and not self.calls.search(_node_text(frame.segment, node))
        ):
            return  # no call in it is worth visiting (`calls`): its callers need not be searched
        info = self.evaluator.function_info(node, self.module, frame.segment, scope, scope.owner)
        inside_jit = context.inside_jit or jitted_by_decorator(node)
        depth = search.depth + (1 if search.callee is not None else 0)
        provided, contexts = self._body_contexts(info, frame, context, depth)
        decorated = traced_by_decorator(node)
        for locals_, caller in contexts[:MAX_CONTEXTS]:
            traced = (
                True
                if provided or decorated or inside_jit or caller.inside_jit or caller.traced
                else None
                if decorated is None or caller.traced is None
                else False
            )
            inner_context = replace(
                caller,
                meshes=context.meshes + caller.meshes,
                rules=context.rules + caller.rules,
                inside_function=True,
                inside_jit=inside_jit or caller.inside_jit,
                traced=traced,
            )
            inner = Frame(self.module, info.scope, frame.segment, None, locals_, frame.call_depth + 1)
            yield from self._statements(
                node.body, inner, inner_context, info.scope, replace(search, depth=depth)
            )

    def _body_contexts(
        self, info: FunctionInfo, frame: Frame, context: Context, depth: int
    ) -> tuple[bool, list[tuple[dict[str, Value], Context]]]:
        """The contexts the function's body runs in, and whether a provider (`body_contexts`)
        gave them. Found once per distinct question and reused (`analysis/reuse.py`): the same
        function is reached by every pass and by every caller search that walks its segment."""

        def find() -> tuple[bool, list[tuple[dict[str, Value], Context]]]:
            provided = self._provided_contexts(info, frame, context, depth)
            return bool(provided), provided or self.call_contexts(info, depth) or [({}, UNKNOWN_CALLER)]

        key = ("contexts", id(info.node), id(self.module), frame_key(frame), context, depth)
        try:
            hash(key)
        except TypeError:  # a context holding an unhashable value: found afresh
            return find()
        return reuse_of(self.evaluator).answer(key, (info, self.module, frame), find)

    def _provided_contexts(
        self, info: FunctionInfo, frame: Frame, context: Context, depth: int
    ) -> list[tuple[dict[str, Value], Context]]:
        if depth > MAX_CALLER_DEPTH:
            return []
        for _, provider in _BODY_CONTEXTS:
            found = provider(self, info, frame, context, depth)
            if found:
                return found
        return []

    def calls_named(self, name: str, depth: int) -> Iterator[Visit]:
        """The calls `name(...)` and `x.name(...)` in this module, in the contexts they run in;
        none when callers are already searched `MAX_CALLER_DEPTH` deep."""
        if depth > MAX_CALLER_DEPTH:
            return
        if self.evaluator.reads is not None:
            self.evaluator.reads.callees.add(name)
        segments = self.module.source.segments
        callers = [segments[i] for i in self.module.call_index.get(name, ())]
        for visit in self._segments(callers, _Search(name, depth)):
            if _calls_name(visit.call, name):
                yield visit

    def call_contexts(self, info: FunctionInfo, depth: int) -> list[tuple[dict[str, Value], Context]]:
        """Argument bindings and caller contexts from the calls visible in this module."""
        owner = info.owner
        if owner is not None and info.name not in ("__init__", "setup", "__post_init__"):
            return []
        callee_name = owner.name if owner is not None else info.name
        found: list[tuple[dict[str, Value], Context]] = []
        for visit in self.calls_named(callee_name, depth):
            locals_ = self._bound_by(info, visit)
            if locals_ is None:
                continue
            where = f"{callee_name}(...) at line {visit.frame.line_of(visit.call) + 1}"
            found.append((locals_, replace(visit.context, call_site=where)))
            if len(found) >= MAX_CONTEXTS:
                break
        return found

    def _bound_by(self, info: FunctionInfo, visit: Visit) -> dict[str, Value] | None:
        """The function's parameters as a call binds them (None: the call calls something else).
        Found once per call and frame (`analysis/reuse.py`): the same caller is visited by the
        searches of every depth, and the same bindings then let what they compute be memoised."""

        def bind() -> dict[str, Value] | None:
            owner = info.owner
            func = self.evaluator.evaluate(visit.call.func, visit.frame)
            if not any(_is_same(option, info, owner) for option in options(func)):
                return None
            args, kwargs = self.evaluator.call_arguments(visit.call, visit.frame)
            # A constructor call passes no `self`: the first argument binds the second parameter.
            receiver = InstanceV(owner, (), visit.call) if owner is not None else None
            locals_ = self.evaluator.bind_arguments(info, args, kwargs, receiver, visit.frame)
            if owner is not None and info.params:
                self_name = info.params[0].arg
                locals_.pop(self_name, None)
                locals_[self_name] = InstanceV(owner, tuple(locals_.items()), visit.call)
            return locals_

        key = ("bound", id(info.node), id(visit.call), frame_key(visit.frame))
        return reuse_of(self.evaluator).answer(key, (info, visit.call, visit.frame), bind)

    # -- contexts ----------------------------------------------------------------------------

    def _enter(self, expression: ast.expr, frame: Frame, context: Context) -> Context:
        value = self.evaluator.evaluate(expression, frame)
        line = frame.line_of(expression) + 1
        if _may_enter_a_mesh(expression, value, self.evaluator, frame):
            # `with global_mesh:` whose mesh cannot be evaluated: a mesh may well be in effect.
            return replace(context, unknown_caller=True)
        if isinstance(value, MeshV):
            is_call = isinstance(expression, ast.Call)
            how = f"with {_short(expression)} at line {line}"
            entered = MeshContext(value, how, frame.span(expression), legacy=not is_call)
            return replace(context, meshes=context.meshes + (entered,))
        if isinstance(expression, ast.Call):
            func = self.evaluator.evaluate(expression.func, frame)
            if isinstance(func, Ref) and func.qualname == "flax.nnx.use_eager_sharding" and expression.args:
                setting = truthiness(self.evaluator.evaluate(expression.args[0], frame))
                return replace(context, eager_sharding=setting)
            if isinstance(func, Ref) and func.qualname == "flax.nnx.logical_axis_rules" and expression.args:
                rules = self.evaluator.evaluate(expression.args[0], frame)
                spelled = ast.unparse(expression.func)
                how = f"with {spelled}(...) at line {line}"
                linen = spelled.startswith(("nn.", "linen.", "flax.linen."))
                return replace(context, rules=context.rules + (RulesContext(rules, how, linen),))
        return context

    def _set_mesh_statement(self, call: ast.Call, frame: Frame) -> MeshContext | None:
        if not call.args or "set_mesh" not in _short(call.func):
            return None
        func = self.evaluator.evaluate(call.func, frame)
        if not (isinstance(func, Ref) and func.qualname == "jax.set_mesh"):
            return None
        mesh = self.evaluator.evaluate(call.args[0], frame)
        if not isinstance(mesh, MeshV):
            return None
        how = f"jax.set_mesh({_short(call.args[0])}) at line {frame.line_of(call) + 1}"
        return MeshContext(mesh, how, frame.span(call))

    def meshes_current_at(self, segment: Segment) -> tuple[MeshContext, ...]:
        return _current_at(self.global_meshes, segment)

    def evaluate_bindings_where_written(self) -> None:
        """From now on the evaluator gives each top-level binding of this module the mesh set
        above it. The meshes set at top level are found first, since finding them evaluates
        bindings too."""
        found = self.global_meshes
        self.evaluator.analysed = self.module
        self.evaluator.mesh_at = lambda segment: _spec_mesh(Context(meshes=_current_at(found, segment)))

    @cached_property
    def global_meshes(self) -> tuple[MeshContext, ...]:
        """Every `jax.set_mesh(m)` top-level statement (or top-level call that runs one, see
        `_mesh_set_by`), in order: each applies to what runs after it."""
        scope = self.module.scope
        found: list[MeshContext] = []
        index = self.module.call_index
        segments = sorted({i for name in ("set_mesh", *self.mesh_setters) for i in index.get(name, ())})
        for segment in (self.module.source.segments[i] for i in segments):
            for stmt in segment.body:
                frame = Frame(self.module, scope, segment, scope.order_of.get(id(stmt)))
                mesh = self._mesh_set_by(stmt, frame)
                if mesh is not None:
                    found.append(mesh)
        return tuple(found)

    # -- meshes set inside the functions a statement calls ------------------------------------

    @cached_property
    def mesh_setters(self) -> frozenset[str]:
        """Names of the functions, methods and classes (by their constructor) whose bodies run a
        `set_mesh(...)` statement, defined in this module or imported from the workspace: a call
        of one of them can make a mesh current (`cfg = Config()` whose `__post_init__` calls
        `jax.set_mesh(self.mesh)`). A cheap syntactic test; calls are checked by evaluation."""
        names: set[str] = set()
        for segment in self.module.source.segments:
            if "set_mesh" in segment.text:
                for stmt in segment.body:
                    names.update(_setters_defined(stmt))
        scope = self.module.scope
        for name, bindings in scope.bindings.items():
            if name in self.module.call_index and any(b.kind == "importfrom" for b in bindings):
                value = self.evaluator.bindings_value(tuple(bindings), scope, None)
                if any(_defines_setter(option) for option in options(value)):
                    names.add(name)
        return frozenset(names)

    def _mesh_set_by(self, stmt: ast.stmt, frame: Frame) -> MeshContext | None:
        """The mesh a statement leaves current: `jax.set_mesh(m)` itself, or a call of a function
        (a constructor, a method) whose body runs `jax.set_mesh(...)` (the last one it runs)."""
        call = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
        if not isinstance(call, ast.Call):
            return None
        name = _called_name(call)
        if name == "set_mesh":
            return self._set_mesh_statement(call, frame)
        if name not in self.mesh_setters:
            return None
        args, kwargs = self.evaluator.call_arguments(call, frame)
        for callee in options(self.evaluator.evaluate(call.func, frame)):
            for info, locals_ in self._bodies_run(callee, args, kwargs, call, frame):
                inner = Frame(info.module, info.scope, info.segment, None, locals_, frame.call_depth + 1)
                mesh = self._last_mesh_set(info.node.body, inner)
                if mesh is not None:
                    run_by = f"{_short(call)} at line {frame.line_of(call) + 1}"
                    return replace(mesh, how=f"{mesh.how} in {info.qualname}(), run by {run_by}")
        return None

    def _bodies_run(
        self, callee: Value, args: list[Value], kwargs: dict[str, Value], call: ast.Call, frame: Frame
    ) -> list[tuple[FunctionInfo, dict[str, Value]]]:
        """The function bodies a call runs, with their parameters bound: a function's or bound
        method's, or a class's `__init__` and `__post_init__` with `self` the new instance."""
        if isinstance(callee, FunctionV):
            return [
                (callee.func, self.evaluator.bind_arguments(callee.func, args, kwargs, callee.bound, frame))
            ]
        if not isinstance(callee, ClassV):
            return []
        instance = self.evaluator.instantiate(callee.cls, args, kwargs, call, frame)
        bodies = []
        for name in _CONSTRUCTORS:
            method = next(
                (k.methods[name] for k in self.evaluator.mro(callee.cls, frame) if name in k.methods), None
            )
            if method is not None:
                passed: tuple[list[Value], dict[str, Value]] = (
                    (args, kwargs) if name == "__init__" else ([], {})
                )
                bodies.append((method, self.evaluator.bind_arguments(method, *passed, instance, frame)))
        return bodies

    def _last_mesh_set(self, body: list[ast.stmt], frame: Frame) -> MeshContext | None:
        """The last `jax.set_mesh(m)` statement that runs in a body (branches decided where possible)."""
        found = None
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            here = replace(frame, position=frame.scope.order_of.get(id(stmt)))
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                found = self._set_mesh_statement(stmt.value, here) or found
            nested = (
                [stmt.body] if isinstance(stmt, (ast.With, ast.AsyncWith)) else self._taken_blocks(stmt, here)
            )
            for block in nested:
                found = self._last_mesh_set(block, frame) or found
        return found


_CONSTRUCTORS = ("__init__", "__post_init__")
"""The methods a class runs when it is called."""


def _setters_defined(stmt: ast.stmt) -> list[str]:
    """The names under which a top-level definition sets a mesh when called: a function's name,
    a class's when its constructor does, a method's when it does (`trainer.setup_mesh()`)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [stmt.name] if _runs_set_mesh(stmt) else []
    if not isinstance(stmt, ast.ClassDef):
        return []
    methods = [
        m for m in stmt.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and _runs_set_mesh(m)
    ]
    names = [m.name for m in methods if m.name not in _CONSTRUCTORS]
    return [stmt.name, *names] if len(names) < len(methods) else names


def _defines_setter(value: Value) -> bool:
    """An imported function or class that sets a mesh when called (see `_setters_defined`)."""
    if isinstance(value, FunctionV):
        return _runs_set_mesh(value.func.node)
    return isinstance(value, ClassV) and value.cls.name in _setters_defined(value.cls.node)


def _runs_set_mesh(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and _called_name(node.value) == "set_mesh"
        for node in ast.walk(function)
    )


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _is_same(value: Value, info: FunctionInfo, owner: ClassInfo | None) -> bool:
    if owner is not None:
        return isinstance(value, ClassV) and value.cls.node is owner.node
    return isinstance(value, FunctionV) and value.func.node is info.node


@functools.lru_cache(maxsize=16_384)
def _calls_in(expression: ast.AST) -> tuple[tuple[ast.Call, ast.Call | None], ...]:
    """The calls an expression makes where it is written, each with the call it is an argument
    of, in the order they are visited (found once per node: a function's body is walked again
    for every context it runs in)."""
    found: list[tuple[ast.Call, ast.Call | None]] = []
    stack: list[tuple[ast.AST, ast.Call | None]] = [(expression, None)]
    while stack:
        node, parent = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or (
            isinstance(node, ast.Lambda) and _has_parameters(node)
        ):
            continue  # a lambda without parameters (`nnx.eval_shape(lambda: Model(...))`) runs as written
        if isinstance(node, ast.Call):
            found.append((node, parent))
            parent = node
        children: list[tuple[ast.AST, ast.Call | None]] = []
        for name in node._fields:
            child = getattr(node, name, None)
            if isinstance(child, list):
                children.extend((item, parent) for item in child if isinstance(item, _CALL_HOLDERS))
            elif isinstance(child, _CALL_HOLDERS):
                children.append((child, parent))
        stack.extend(reversed(children))
    return tuple(found)


def _has_parameters(node: ast.Lambda) -> bool:
    args = node.args
    return bool(args.posonlyargs or args.args or args.vararg or args.kwonlyargs or args.kwarg)


_CALL_HOLDERS = (ast.expr, ast.keyword, ast.comprehension)
"""Node kinds that may contain a call (operators and load/store contexts never do)."""


def _calls_name(call: ast.Call, name: str) -> bool:
    return _called_name(call) == name


def _node_text(segment: Segment, node: ast.AST) -> str:
    first = getattr(node, "lineno", 1) - 1
    last = getattr(node, "end_lineno", None) or len(segment.lines)
    return "\n".join(segment.lines[first:last])


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


def target_name(stmt: ast.stmt) -> str | None:
    """The name an assignment binds (`self.up = ...` -> `up`), for naming the sites it creates."""
    targets: list[ast.expr] = []
    if isinstance(stmt, ast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, ast.AnnAssign):
        targets = [stmt.target]
    for target in targets:
        if isinstance(target, ast.Name):
            return target.id
        if isinstance(target, ast.Attribute):
            return target.attr
    return None


def _own_expressions(stmt: ast.stmt) -> list[ast.AST]:
    """The expressions a statement evaluates itself (not those of its nested blocks)."""
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter]
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        return []
    if isinstance(stmt, ast.Match):
        return [stmt.subject]
    return [stmt]


@functools.lru_cache(maxsize=1024)
def first_arguments(module: ModuleInfo, callee: str) -> frozenset[str]:
    """The names a module passes as first argument to calls of `callee` (`jax.jit(step)`,
    `nnx.vmap(create_block)`): one scan of the text per module and callee, not one per function
    the walker asks about (thousands in a long test class)."""
    pattern = re.compile(rf"\b{re.escape(callee)}\s*\(\s*([A-Za-z_]\w*)")
    segments = module.source.segments
    return frozenset(
        match.group(1)
        for i in module.call_index.get(callee, ())
        for match in pattern.finditer(segments[i].text)
    )


_EXITS = frozenset(
    {
        "pytest.skip",
        "pytest.fail",
        "pytest.exit",
        "pytest.xfail",
        "sys.exit",
        "os._exit",
        "os.abort",
        "builtins.exit",
        "builtins.quit",
    }
)
"""Functions that never return (the code after a call of one does not run)."""

_TEST_CASE_EXITS = frozenset({"skipTest", "fail"})
"""`unittest.TestCase` methods that raise (`self.skipTest(...)`)."""


def _may_enter_a_mesh(expression: ast.expr, value: Value, evaluator: Evaluator, frame: Frame) -> bool:
    """A context manager whose value is not known: a name (`with mesh:`), or a call of code
    shardls cannot follow (`with config.mesh_context():`); not a library call it knows."""
    if not isinstance(value, Unknown):
        return False
    if isinstance(expression, ast.Call):
        return not any(isinstance(o, Ref) for o in options(evaluator.evaluate(expression.func, frame)))
    return isinstance(expression, (ast.Name, ast.Attribute))


def _may_exit(func: ast.expr) -> bool:
    """A cheap test of the syntax before the callee is evaluated: its last name is one of the
    functions that never return, or says it fails or raises."""
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in _EXIT_NAMES or any(word in name.lower() for word in ("fail", "raise", "abort", "error"))


_EXIT_NAMES = frozenset(qualname.rsplit(".", 1)[-1] for qualname in _EXITS)


def _only_raises(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A helper whose body ends in `raise` and never returns."""
    body = node.body
    return (
        bool(body)
        and isinstance(body[-1], ast.Raise)
        and not any(isinstance(n, ast.Return) for n in ast.walk(node))
    )


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(stmt, (ast.If, ast.While, ast.For, ast.AsyncFor)):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        handlers = [h.body for h in stmt.handlers]  # type: ignore[attr-defined]
        return [stmt.body, *handlers, stmt.orelse, stmt.finalbody]  # type: ignore[attr-defined]
    if isinstance(stmt, ast.Match):
        return [case.body for case in stmt.cases]
    return []


def _current_at(found: tuple[MeshContext, ...], segment: Segment) -> tuple[MeshContext, ...]:
    """The mesh current when a top-level segment starts, of those the module sets (`found`, in
    order). When the module sets one mesh (or the same one each time), that mesh everywhere:
    functions defined above the statement that sets it run after it. When it sets different
    meshes in turn (notebooks and tutorials: a mesh per section), the last one set above the
    segment, and none above the first."""
    if not _in_turn(found):
        return found[-1:]
    before = [context for context in found if context.span.line < segment.first_line]
    return tuple(replace(context, in_turn=True) for context in before[-1:])


def _in_turn(found: tuple[MeshContext, ...]) -> bool:
    return len({context.mesh.mesh for context in found}) > 1


def _spec_mesh(context: Context) -> MeshV | None:
    mesh = context.spec_mesh
    return mesh.mesh if mesh is not None else None
