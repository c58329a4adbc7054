"""Names: which bindings of a name reach the point of a question (scope by scope, `if` tests
decided, loops and rebound parameters accounted for), and their values, memoised per binding and
locals so that every reader of a name shares one evaluation."""

from __future__ import annotations

import ast
import contextlib
import os
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from shardls.analysis.evaluation.bindings import evaluate_binding
from shardls.analysis.evaluation.device_branches import devices_stated, note_branch
from shardls.analysis.evaluation.frame import Frame
from shardls.analysis.evaluation.interfaces import Reads
from shardls.analysis.evaluation.known_values import decided
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.scopes import Binding, Scope
from shardls.analysis.sharded.events import TypeEvent
from shardls.analysis.sharded.propagate import named
from shardls.analysis.source import Segment
from shardls.analysis.values import ArrayV, Const, Guard, MeshV, Origin, Ref, Unknown, Value

if TYPE_CHECKING:
    from shardls.analysis.evaluation.frame import ExpressionHandlers
    from shardls.analysis.evaluator import Evaluator


_BUILTIN_NAMES = frozenset(
    [
        "len",
        "int",
        "float",
        "str",
        "bool",
        "tuple",
        "list",
        "dict",
        "set",
        "range",
        "min",
        "max",
        "sum",
        "abs",
        "round",
        "sorted",
        "reversed",
        "zip",
        "enumerate",
        "map",
        "isinstance",
        "type",
        "print",
        "getattr",
        "object",
        "super",
        "open",
    ]
)


@dataclass
class BindingMemos:
    """Values of bindings and decided `if` tests, by (binding, locals), kept for the evaluator's
    life: every lookup of a name asks them of each of its bindings."""

    values: dict[tuple[int, int], Value] = field(default_factory=dict)
    """The value of a binding (`binding_value`)."""
    value_events: dict[tuple[int, int], tuple[TypeEvent, ...]] = field(default_factory=dict)
    """The sharded-type events computing a value recorded, replayed when it is read again."""
    active: set[tuple[int, int]] = field(default_factory=set)
    """Bindings being evaluated: meeting one again means it is defined in terms of itself."""
    reached: dict[tuple[int, int], bool] = field(default_factory=dict)
    """Whether the `if` tests on a binding's path let it reach here (`_reachable`)."""
    reached_events: dict[tuple[int, int], tuple[TypeEvent, ...]] = field(default_factory=dict)
    """The sharded-type events deciding those tests recorded, replayed likewise."""
    reads: dict[tuple[str, int, int], Reads] = field(default_factory=dict)
    """What computing each memoised value or test read (module-level names, workspace modules,
    searched callees), by ("value" or "reached", binding, locals): noted again for every reader
    that gets the memo, since each reader's incremental result depends on it as much as the
    first reader's did (a segment that read an imported constant through the memo was not
    analysed again when the imported file changed)."""
    joined: dict[tuple[int, ...], tuple[list[Binding], list[Value], Value]] = field(default_factory=dict)
    """The choice of several bindings' values (`bindings_value`), by the bindings and the very
    values (kept with it, so that no id is reused): the values are memoised, so a name read
    again joins the same values, and joining options of options, each compared with the
    others, was most of the time of keras' `deserialize_keras_object` (a `config` rebound in
    a dozen branches)."""
    stated_counts: dict[Guard, tuple[frozenset[int] | None, int]] = field(default_factory=dict)
    """What an `if` branch on the default device count says of it, with the test's line: the
    counts it leaves (at most a few), or None when it only contradicts the default
    (`device_branches`). One dict shared by the memos of every device count (`under`): what a
    branch says does not depend on where it is asked."""
    narrowed: dict[Hashable, BindingMemos] = field(default_factory=dict)
    """The memos kept while the device count is the one a branch states (`under`), shared
    likewise."""
    kept_locals: dict[int, Mapping[str, Value]] = field(default_factory=dict)
    """The locals the memos above are keyed by (by id), kept alive so that no later call's
    locals can get the same id and be answered with another call's values."""

    def under(self, environment: Hashable) -> BindingMemos:
        """The memos of the values computed where the device count is the one a branch states
        (`environment`): a name read inside `if jax.device_count() == 4:` has the value it has on
        4 devices, which must answer no reader on the assumed count, nor the reverse."""
        found = self.narrowed.get(environment)
        if found is None:
            found = BindingMemos(stated_counts=self.stated_counts, narrowed=self.narrowed)
            self.narrowed[environment] = found
        return found


def _eval_Name(evaluator: Evaluator, node: ast.Name, frame: Frame) -> Value:
    value = evaluator.lookup(node.id, frame, node)
    if evaluator.typing is not None and isinstance(value, ArrayV) and value.typed is not None:
        named(evaluator, frame, node, value.typed)  # a hover on the name answers with its type
    return value


def _eval_NamedExpr(evaluator: Evaluator, node: ast.NamedExpr, frame: Frame) -> Value:
    return evaluator.eval(node.value, frame)


def lookup(evaluator: Evaluator, name: str, frame: Frame, node: ast.AST | None = None) -> Value:
    if name in frame.locals and (
        frame.position is None or frame.in_order or not frame.scope.superseded(name, frame.position)
    ):
        return frame.locals[name]
    scope: Scope | None = frame.scope
    position = frame.position
    first = True
    enclosing = frame.enclosing
    while scope is not None:
        if scope.module is not None and scope.kind == "module" and evaluator.reads is not None:
            evaluator.reads.names.add((scope.module.path, name))
        if enclosing is not None and scope is enclosing.scope:
            # A nested function reads its enclosing call's names as they are when it runs.
            outer = Frame(
                enclosing.module,
                scope,
                enclosing.segment,
                None,
                enclosing.locals,
                enclosing.call_depth,
                enclosing.enclosing,
            )
            candidates = scope.lookup(name, None)
            if candidates:
                return evaluator.bindings_value(candidates, scope, outer)
            enclosing = enclosing.enclosing
        elif first or scope.kind != "class":
            if not first:
                position = _runs_at(frame, scope)
            candidates = scope.lookup(name, position)
            if candidates:
                value = evaluator.bindings_value(candidates, scope, frame if first else None)
                if first:
                    return value
                if _rebound_elsewhere(frame, scope, name):
                    return Unknown(
                        f"{name!r} is bound again by a function that declares it global", symbol=name
                    )
                return value if position is not None else _read_from_a_function(value, name, scope)
        first = False
        position = None
        scope = scope.parent
    if name in _BUILTIN_NAMES:
        return Ref(f"builtins.{name}")
    if name == "__file__":
        return _file_path(frame)
    assigned = _set_by_functions(evaluator, name, frame)
    if assigned is not None:
        return assigned
    return Unknown(f"{name!r} is not defined here", symbol=name)


def _set_by_functions(evaluator: Evaluator, name: str, frame: Frame) -> Value | None:
    """A module-level name the module binds only in functions that declare it `global`
    (EasyLM's `init_rng` sets `jax_utils_rng`, which `next_rng` reads): any read that finds it
    bound finds what one of them assigned, each evaluated as its function runs with arguments
    not known here. None when no function of the module sets it."""
    module = frame.module
    values: list[Value] = []
    for segment, stmt in module.global_setters.get(name, ()):
        if evaluator.reads is not None:  # an edit of the setter changes what this read finds
            evaluator.reads.names.add((module.path, stmt.name))
        info = evaluator.function_info(stmt, module, segment, module.scope)
        candidates = info.scope.lookup(name, None)
        if candidates:
            setter = Frame(module, info.scope, segment, None, {}, frame.call_depth + 1)
            values.append(evaluator.bindings_value(candidates, info.scope, setter))
    return evaluator.choice(values) if values else None


def _rebound_elsewhere(frame: Frame, scope: Scope, name: str) -> bool:
    """Whether a module-level name a function reads is also assigned by another function that
    declares it `global` (maxtext's `BATCH_SIZE = 1  # will be updated inside the test`, set
    to the batch by the test before the helpers that read it run): what the reader meets
    depends on which of them ran first, so its module-level binding is no more known than the
    others."""
    if scope.kind != "module":
        return False
    reader = frame.scope.function
    return any(
        setter is not (reader.node if reader is not None else None) and _assigns(setter, name)
        for _, setter in frame.module.global_setters.get(name, ())
    )


def _assigns(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    return any(
        isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
        for node in ast.walk(function)
    )


def _file_path(frame: Frame) -> Value:
    """`__file__`: the path of the module being read, where it is in the workspace (what a config
    loader finds its files from: `os.path.dirname(__file__)`)."""
    path = os.path.abspath(frame.module.path)
    if path.endswith(".ipynb"):
        return Unknown("__file__ is not defined in a notebook", symbol="__file__")
    return Const(path, origin=Origin(f"the path of {os.path.basename(path)}"))


def bindings_value(
    evaluator: Evaluator, candidates: tuple[Binding, ...], scope: Scope, frame: Frame | None
) -> Value:
    reachable = [b for b in candidates if _reachable(evaluator, b, scope, frame)] or list(candidates)
    changed = next((b for b in reachable if b.in_loop), None)
    if changed is not None:
        # Not the value before the loop, nor after one iteration: the count is not known.
        return Unknown(f"{changed.name!r} is changed in a loop", symbol=changed.name)
    chosen = reachable[-evaluator.limits.choices :]
    values = [evaluator.binding_value(binding, scope, frame) for binding in chosen]
    if len(values) == 1:
        return values[0]
    key = tuple(map(id, chosen)) + tuple(map(id, values))
    joined = evaluator.memos.joined.get(key)
    if joined is None:
        guards = [frozenset((id(s), branch) for s, branch in b.guards) for b in chosen]
        joined = (chosen, values, evaluator.choice(values, guards))
        evaluator.memos.joined[key] = joined
    return joined[2]


def _reachable(evaluator: Evaluator, binding: Binding, scope: Scope, frame: Frame | None) -> bool:
    """False when an `if` test on the binding's path is decided against its branch. Memoised
    as `binding_value` is (every lookup of a name asks it of each of its bindings)."""
    if not binding.guards:
        return True
    locals_ = frame.locals if frame is not None and scope is frame.scope else {}
    key = (id(binding), _locals_key(locals_, frame, scope))
    cached = evaluator.memos.reached.get(key)
    if cached is not None:
        if evaluator.typing is not None and key in evaluator.memos.reached_events:
            evaluator.typing.replay(evaluator.memos.reached_events[key])
        _read_again(evaluator, ("reached", *key))
        return cached
    mark = evaluator.typing.mark() if evaluator.typing is not None else 0
    with _Reading(evaluator, ("reached", *key)):
        reached = _guards_hold(evaluator, binding, scope, frame, locals_)
    evaluator.memos.reached[key] = reached
    evaluator.memos.kept_locals[key[1]] = locals_
    if evaluator.typing is not None:
        events = evaluator.typing.since(mark)
        if events:
            evaluator.memos.reached_events[key] = events
    return reached


def _locals_key(locals_: Mapping[str, Value], frame: Frame | None, scope: Scope) -> int:
    """What a memo of a binding is keyed by besides the binding: the call's locals (by id, kept
    alive in `BindingMemos.kept_locals`), none at module level. A nested function's call is
    keyed by its locals even when it has none: its names also depend on the enclosing call."""
    closure = frame is not None and scope is frame.scope and frame.enclosing is not None
    return id(locals_) if locals_ or closure else 0


def _guards_hold(
    evaluator: Evaluator, binding: Binding, scope: Scope, frame: Frame | None, locals_: Mapping[str, Value]
) -> bool:
    for statement, branch in binding.guards:
        module = _module_of(scope, frame)
        test_frame = Frame(
            module,
            scope,
            binding.segment,
            scope.order_of.get(id(statement)),
            locals_,
            frame.call_depth if frame is not None else 0,
            frame.enclosing if frame is not None and scope is frame.scope else None,
        )
        test = evaluator.eval(statement.test, test_frame)
        if decided(test) is (not branch):
            return False
        if isinstance(statement, ast.If):
            note_branch(evaluator, statement, branch, test, test_frame)
    return True


def binding_value(evaluator: Evaluator, binding: Binding, scope: Scope, frame: Frame | None) -> Value:
    locals_ = frame.locals if frame is not None and scope is frame.scope else {}
    key = (id(binding), _locals_key(locals_, frame, scope))
    cached = evaluator.memos.values.get(key)
    if cached is not None:
        if evaluator.typing is not None and key in evaluator.memos.value_events:
            evaluator.typing.replay(evaluator.memos.value_events[key])
        _read_again(evaluator, ("value", *key))
        return cached
    if key in evaluator.memos.active:
        return Unknown(f"{binding.name!r} is defined in terms of itself", symbol=binding.name)
    evaluator.memos.active.add(key)
    mark = evaluator.typing.mark() if evaluator.typing is not None else 0
    try:
        module = frame.module if frame is not None and scope is frame.scope else _module_of(scope, frame)
        inner = Frame(
            module,
            scope,
            binding.segment,
            binding.order,
            locals_,
            frame.call_depth if frame is not None else 0,
            frame.enclosing if frame is not None and scope is frame.scope else None,
        )
        if _runs_where_written(evaluator, module, scope):
            with (
                _where_written(evaluator, binding.segment),
                _Reading(evaluator, ("value", *key)),
                _counts_its_branches_state(evaluator, binding),
            ):
                value = evaluate_binding(evaluator, binding, scope, inner)
        else:
            with _Reading(evaluator, ("value", *key)), _counts_its_branches_state(evaluator, binding):
                value = evaluate_binding(evaluator, binding, scope, inner)
    finally:
        evaluator.memos.active.discard(key)
    evaluator.memos.values[key] = value
    evaluator.memos.kept_locals[key[1]] = locals_
    if evaluator.typing is not None:
        events = evaluator.typing.since(mark)
        if events:
            evaluator.memos.value_events[key] = events
    return value


def _counts_its_branches_state(
    evaluator: Evaluator, binding: Binding
) -> contextlib.AbstractContextManager[None]:
    """A binding written in a branch on the device count is computed with the count the branch
    leaves (vmoe's `devices = devices.reshape((1, 1))` in the `else` of `if devices.size > 1:`
    runs on one device), as a mesh constructor reading a shape bound there is: the value holds
    the devices it was made of, so no later reader can narrow it again. The branches' tests were
    noted by `_reachable`, which every reader asks first."""
    if not binding.guards or not evaluator.memos.stated_counts:
        return contextlib.nullcontext()
    return devices_stated(evaluator, frozenset((id(s), branch) for s, branch in binding.guards))


class _Reading:
    """Notes what the computation inside reads under `key` of `BindingMemos.reads` (and for the
    reader asking, if reads are being noted). A class, not a generator: one is entered for each
    binding evaluated and each test of its guards (170,000 in a check of maxtext)."""

    __slots__ = ("evaluator", "key", "outer", "inner")

    def __init__(self, evaluator: Evaluator, key: tuple[str, int, int]) -> None:
        self.evaluator = evaluator
        self.key = key
        self.outer: Reads | None = None
        self.inner = Reads()

    def __enter__(self) -> None:
        self.outer = self.evaluator.reads
        self.evaluator.reads = self.inner

    def __exit__(self, *_: object) -> None:
        evaluator, outer, inner = self.evaluator, self.outer, self.inner
        evaluator.reads = outer
        if inner.noted():
            evaluator.memos.reads[self.key] = inner
        if outer is not None:
            outer.add(inner)


def _read_again(evaluator: Evaluator, key: tuple[str, int, int]) -> None:
    """A memo's reads, noted for the reader that got it."""
    kept = evaluator.memos.reads.get(key)
    if kept is not None and evaluator.reads is not None:
        evaluator.reads.add(kept)


def _runs_where_written(evaluator: Evaluator, module: ModuleInfo, scope: Scope) -> bool:
    """Whether a binding runs under what is current where it is written (`_where_written`): a
    top-level binding of the module analysed, when the meshes above its statements are known."""
    return evaluator.mesh_at is not None and scope.kind == "module" and module is evaluator.analysed


@contextlib.contextmanager
def _where_written(evaluator: Evaluator, segment: Segment) -> Iterator[None]:
    """A top-level binding runs eagerly where it is written, under the mesh set above it: its
    value (memoised for every reader) must not take the mesh or tracing of the code that
    happens to read it first (an array placed under an Auto mesh, read below a later
    `jax.set_mesh` of an Explicit one)."""
    mesh_at = evaluator.mesh_at
    assert mesh_at is not None
    evaluator.mesh_at = None  # finding that mesh evaluates bindings too (the `set_mesh` statements)
    try:
        mesh = mesh_at(segment)
    finally:
        evaluator.mesh_at = mesh_at
    previous = evaluator.state
    evaluator.context_mesh, evaluator.tracing = mesh, False
    try:
        yield
    finally:
        evaluator.state = previous


def _module_of(scope: Scope, frame: Frame | None) -> ModuleInfo:
    if scope.module is not None:
        return scope.module
    assert frame is not None
    return frame.module


def _runs_at(frame: Frame, scope: Scope) -> int | None:
    """Where in `scope`, the module of a function's body, the call of `frame` runs (None: not
    known, or another module's)."""
    runs = frame.runs_at
    if runs is None or scope.kind != "module" or scope.module is None or scope.module.path != runs[0]:
        return None
    return runs[1]


def _read_from_a_function(value: Value, name: str, scope: Scope) -> Value:
    """A function reads a module's global when it is called, not where it is defined: when the
    module binds a mesh name more than once (a tutorial's `mesh = ...` per section), the last
    binding is only one of the meshes the function may meet."""
    if not isinstance(value, MeshV) or scope.kind != "module" or len(scope.bindings.get(name, ())) < 2:
        return value
    note = f"`{name}` as last bound in the module; it is bound again, and the function may run before"
    return replace(value, assumptions=(*value.assumptions, note))


EXPRESSIONS: ExpressionHandlers = {
    ast.Name: _eval_Name,
    ast.NamedExpr: _eval_NamedExpr,
}
"""The expressions this module evaluates (`Evaluator.eval` dispatches on the node's type)."""
