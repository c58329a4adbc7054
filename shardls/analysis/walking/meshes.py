"""The meshes a module's statements make current: `jax.set_mesh(m)` at top level, in order, and
calls of the functions, methods and constructors whose bodies run one (a config whose
`__post_init__` calls `jax.set_mesh(self.mesh)`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from functools import cached_property

from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.node_memo import per_node
from shardls.analysis.scopes import Binding
from shardls.analysis.source import Segment
from shardls.analysis.values import ClassV, FunctionV, MeshV, Ref, Value, options
from shardls.analysis.walking.call_syntax import called_name
from shardls.analysis.walking.contexts import Context, MeshContext, short
from shardls.analysis.walking.control_flow import taken_blocks


@dataclass
class ModuleMeshes:
    """The meshes set by the statements of `module`, found once per walk."""

    evaluator: Evaluator
    module: ModuleInfo

    def current_at(self, segment: Segment) -> tuple[MeshContext, ...]:
        """The meshes current where a top-level segment starts (see `_current_at`)."""
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
        `set_by`), in order: each applies to what runs after it."""
        scope = self.module.scope
        found: list[MeshContext] = []
        index = self.module.call_index
        segments = sorted({i for name in ("set_mesh", *self.mesh_setters) for i in index.get(name, ())})
        for segment in (self.module.source.segments[i] for i in segments):
            for stmt in segment.body:
                frame = Frame(self.module, scope, segment, scope.order_of.get(id(stmt)))
                mesh = self.set_by(stmt, frame)
                if mesh is not None:
                    found.append(mesh)
        return tuple(found)

    @cached_property
    def mesh_setters(self) -> frozenset[str]:
        """Names of the functions, methods and classes (by their constructor) whose bodies run a
        `set_mesh(...)` statement, defined in this module or imported from the workspace: a call
        of one of them can make a mesh current (`cfg = Config()` whose `__post_init__` calls
        `jax.set_mesh(self.mesh)`). A cheap syntactic test; calls are checked by evaluation."""
        names: set[str] = set()
        for segment in self.module.source.segments:
            if "set_mesh" in segment.text:
                names.update(_setters_in(segment.body))
        scope = self.module.scope
        # The imported names the module calls, in the order of their first bindings (the order
        # of `scope.bindings`), found without a pass over every name of the module.
        called = self.module.module_scope.imported & self.module.call_index.keys()
        for name in sorted(called, key=lambda n: _first_bound(scope.bindings[n][0])):
            value = self.evaluator.bindings_value(tuple(scope.bindings[name]), scope, None)
            if any(_defines_setter(option) for option in options(value)):
                names.add(name)
        return frozenset(names)

    def set_by(self, stmt: ast.stmt, frame: Frame) -> MeshContext | None:
        """The mesh a statement leaves current: `jax.set_mesh(m)` itself, or a call of a function
        (a constructor, a method) whose body runs `jax.set_mesh(...)` (the last one it runs)."""
        call = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
        if not isinstance(call, ast.Call):
            return None
        name = called_name(call)
        if name == "set_mesh":
            return self._set_mesh_statement(call, frame)
        if name not in self.mesh_setters:
            return None
        args, kwargs = self.evaluator.call_arguments(call, frame)
        for callee in options(self.evaluator.evaluate(call.func, frame)):
            for info, locals_ in self._bodies_run(callee, args, kwargs, call, frame):
                inner = Frame(
                    info.module,
                    info.scope,
                    info.segment,
                    None,
                    locals_,
                    frame.call_depth + 1,
                    runs_at=frame.callee_runs_at(),
                )
                mesh = self._last_mesh_set(info.node.body, inner)
                if mesh is not None:
                    run_by = f"{short(call)} at line {frame.line_of(call) + 1}"
                    return replace(mesh, how=f"{mesh.how} in {info.qualname}(), run by {run_by}")
        return None

    def _set_mesh_statement(self, call: ast.Call, frame: Frame) -> MeshContext | None:
        if not call.args or "set_mesh" not in short(call.func):
            return None
        func = self.evaluator.evaluate(call.func, frame)
        if not (isinstance(func, Ref) and func.qualname == "jax.set_mesh"):
            return None
        mesh = self.evaluator.evaluate(call.args[0], frame)
        if not isinstance(mesh, MeshV):
            return None
        how = f"jax.set_mesh({short(call.args[0])}) at line {frame.line_of(call) + 1}"
        return MeshContext(mesh, how, frame.span(call))

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
            here = frame.at(frame.scope.order_of.get(id(stmt)))
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                found = self._set_mesh_statement(stmt.value, here) or found
            nested = (
                [stmt.body]
                if isinstance(stmt, (ast.With, ast.AsyncWith))
                else [block for block, _ in taken_blocks(self.evaluator, stmt, here, None)]
            )
            for block in nested:
                found = self._last_mesh_set(block, frame) or found
        return found


_CONSTRUCTORS = ("__init__", "__post_init__")
"""The methods a class runs when it is called."""


def _first_bound(binding: Binding) -> tuple[int, int, int]:
    """Where a binding comes in a scope's pass: its statement, then its place in the statement (an
    imported name among those of one `from ... import`)."""
    return binding.order, getattr(binding.node, "lineno", 0), getattr(binding.node, "col_offset", 0)


def _setters_in(body: tuple[ast.stmt, ...]) -> frozenset[str]:
    return frozenset(name for stmt in body for name in _setters_defined(stmt))


@per_node
def _setters_defined(stmt: ast.stmt) -> tuple[str, ...]:
    """The names under which a top-level definition sets a mesh when called: a function's name,
    a class's when its constructor does, a method's when it does (`trainer.setup_mesh()`). Kept
    with the statement's tree, which a file's segments keep from one edit to the next: walking
    every function of every segment that names `set_mesh` again took a third of an edit of flax's
    `tests/nnx/transforms_test.py` (and a cache keyed by the trees would keep old ones alive)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return (stmt.name,) if _runs_set_mesh(stmt) else ()
    if not isinstance(stmt, ast.ClassDef):
        return ()
    methods = [
        m for m in stmt.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and _runs_set_mesh(m)
    ]
    names = tuple(m.name for m in methods if m.name not in _CONSTRUCTORS)
    return (stmt.name, *names) if len(names) < len(methods) else names


def _defines_setter(value: Value) -> bool:
    """An imported function or class that sets a mesh when called (see `_setters_defined`).
    Only one whose top-level statement's text says `set_mesh` can (as in `mesh_setters`): the
    test spares walking every imported function's body in every file (7% of a check's time)."""
    if isinstance(value, FunctionV):
        return "set_mesh" in value.func.segment.text and _runs_set_mesh(value.func.node)
    return (
        isinstance(value, ClassV)
        and "set_mesh" in value.cls.segment.text
        and value.cls.name in _setters_defined(value.cls.node)
    )


@per_node
def _runs_set_mesh(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether the body has a `set_mesh(...)` statement; once per function (each pass over a
    module asks of its definitions). Only statements are walked, not the expressions inside
    them, which hold no statement: a test class of thousands of lines mentions `set_mesh`, and
    every node of every one of its methods was visited."""
    stack: list[ast.AST] = [function]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Expr):
            if isinstance(node.value, ast.Call) and called_name(node.value) == "set_mesh":
                return True
            continue
        stack.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, _HOLDS_STATEMENTS))
    return False


_HOLDS_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)
"""The nodes a statement can be in (a statement's own expressions hold none)."""


def _current_at(found: tuple[MeshContext, ...], segment: Segment) -> tuple[MeshContext, ...]:
    """The mesh current when a top-level segment starts, of those the module sets (`found`, in
    order). When the module sets one mesh (or the same one each time), that mesh everywhere:
    functions defined above the statement that sets it run after it. When it sets different
    meshes in turn (notebooks and tutorials: a mesh per section), the last one set above the
    segment, and none above the first."""
    if not set_in_turn(found):
        return found[-1:]
    before = [context for context in found if context.span.line < segment.first_line]
    return tuple(replace(context, in_turn=True) for context in before[-1:])


def set_in_turn(found: tuple[MeshContext, ...]) -> bool:
    """Whether the module sets different meshes in turn (a mesh per section of a tutorial)."""
    return len({context.mesh.mesh for context in found}) > 1


def _spec_mesh(context: Context) -> MeshV | None:
    mesh = context.spec_mesh
    return mesh.mesh if mesh is not None else None
