"""Every parameter a `nnx.Module` subclass creates in `__init__`, with its attribute path.

The per-call sites of the analysis name a parameter after its attribute (`up.kernel`) and skip
unannotated ones; a memory total needs all of them, each under its full path
(`layers[0..79].mlp.up.kernel`) and counted once per copy. So this walks `__init__` statement by
statement with the analysis' evaluator (which knows configs, defaults and Flax) and follows what
each `self.x = ...` builds: Flax layers (through the recognizer's shape formulas), submodules
(their own `__init__`, with the arguments of this call), lists and comprehensions of them, and
functions under `nnx.vmap` (whose layers gain a stacked axis).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from shardls.analysis.evaluator import Evaluator, Frame, truthiness
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.nnx import StackLevel, StackV, stacked_context
from shardls.analysis.recognizers.nnx import LAYER_NAMES, Annotation, LayerParam, layer_params, variable_param
from shardls.analysis.scopes import ClassInfo, FunctionInfo
from shardls.analysis.values import ClassV, FunctionV, InstanceV, Ref, Seq, Unknown, Value, options
from shardls.core import DType
from shardls.memory.model import ParamPath

MODULE_BASE = "flax.nnx.Module"
MAX_DEPTH = 10
"""Submodules nested deeper than this are not followed (and a note says so)."""
MAX_STEPS = 20_000
"""Layer calls and module constructions resolved per model (identical layers resolve once: the
70B example takes 13)."""
MAX_UNROLLED = 1024
"""Items of a comprehension resolved one by one when their sizes depend on the loop."""
_CONTAINERS = frozenset(["flax.nnx.List", "builtins.list", "builtins.tuple", "flax.nnx.Sequential"])
_VARIABLES = frozenset(["flax.nnx.Param"])


@dataclass(frozen=True)
class RawParam:
    """A parameter as written, before its layout: shape and annotation are still values."""

    where: ParamPath
    shape: tuple[Value, ...] | None
    dtype: DType | None
    annotation: Annotation | None
    levels: tuple[StackLevel, ...]
    line: int

    @property
    def path(self) -> str:
        return self.where.compact()

    def under(self, prefix: str, copies: Sequence[str] = ()) -> RawParam:
        """The same parameter seen from the module that holds it: `prefix` then each copy's index."""
        return replace(self, where=self.where.under(prefix, copies))


class ModelResolver:
    """Resolves classes of one workspace; `notes` collects what had to be assumed."""

    def __init__(self, evaluator: Evaluator, library: Library) -> None:
        self.evaluator = evaluator
        self.library = library
        self.notes: list[str] = []
        self.budget = MAX_STEPS
        self._building: list[int] = []

    def start(self) -> None:
        """A new model: fresh notes and a fresh budget."""
        self.notes = []
        self.budget = MAX_STEPS

    def spend(self) -> bool:
        """One layer or module more; False (with a note) once the budget is used up, so that a
        model built in nested loops cannot take unbounded time."""
        self.budget -= 1
        if self.budget < 0:
            self.note(f"more than {MAX_STEPS} layers and modules to resolve: the rest is not counted")
        return self.budget >= 0

    def is_module(self, cls: ClassInfo, frame: Frame) -> bool:
        return MODULE_BASE in self.evaluator.base_qualnames(cls, frame)

    def resolve_class(
        self,
        cls: ClassInfo,
        args: list[Value],
        kwargs: dict[str, Value],
        frame: Frame,
        stack: StackV | None = None,
        depth: int = 0,
    ) -> list[RawParam]:
        """Run `cls.__init__` with these arguments (missing ones take their defaults)."""
        init = next(
            (k.methods["__init__"] for k in self.evaluator.mro(cls, frame) if "__init__" in k.methods), None
        )
        if init is None:
            return []
        if depth > MAX_DEPTH or id(cls.node) in self._building:
            self.note(
                f"{cls.name} is nested in itself or more than {MAX_DEPTH} modules deep: not counted there"
            )
            return []
        if not self.spend():
            return []
        locals_ = self.evaluator.bind_arguments(init, args, kwargs, Unknown("self"), frame)
        self_name = init.params[0].arg if init.params else "self"
        locals_.pop(self_name, None)
        locals_[self_name] = InstanceV(cls, tuple(locals_.items()))
        inner = Frame(init.module, init.scope, init.segment, None, locals_, frame.call_depth + 1)
        self._building.append(id(cls.node))
        try:
            return _Body(self, init, self_name, stack, depth).run(init.node.body, inner)
        finally:
            self._building.pop()

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


class _Body:
    """One run of one `__init__`: its `self.x = ...` statements and the module values of its locals."""

    def __init__(
        self, resolver: ModelResolver, init: FunctionInfo, self_name: str, stack: StackV | None, depth: int
    ) -> None:
        self.resolver = resolver
        self.evaluator = resolver.evaluator
        self.init = init
        self.self_name = self_name
        self.stack = stack
        self.depth = depth
        self.local_modules: dict[str, list[RawParam]] = {}

    def run(self, body: list[ast.stmt], frame: Frame) -> list[RawParam]:
        found: list[RawParam] = []
        for stmt in body:
            here = replace(frame, position=self.init.scope.order_of.get(id(stmt)))
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                found += self._assignment(stmt, stmt.value, here)
            elif isinstance(stmt, ast.If):
                found += self._branches(stmt, frame, here)
            elif isinstance(stmt, (ast.With, ast.Try)):
                found += self.run(stmt.body, frame)
        return found

    def _assignment(self, stmt: ast.Assign | ast.AnnAssign, value: ast.expr, frame: Frame) -> list[RawParam]:
        params = self.expression(value, frame)
        if params is None:
            return []
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        found: list[RawParam] = []
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                if target.value.id == self.self_name:
                    found += [p.under(target.attr) for p in params]
            elif isinstance(target, ast.Name):
                self.local_modules[target.id] = params
        return found

    def _branches(self, stmt: ast.If, frame: Frame, here: Frame) -> list[RawParam]:
        """A decided test runs one branch; an undecided one counts both (and says so)."""
        truth = truthiness(self.evaluator.evaluate(stmt.test, here))
        if truth is not None:
            return self.run(stmt.body if truth else stmt.orelse, frame)
        found = self.run(stmt.body, frame) + self.run(stmt.orelse, frame)
        if found:
            line = here.line_of(stmt) + 1
            self.resolver.note(
                f"`if {ast.unparse(stmt.test)}` at line {line} is not decided statically: "
                "the parameters of both branches are counted"
            )
        return found

    # -- expressions that build modules ------------------------------------------------------

    def expression(self, node: ast.expr, frame: Frame) -> list[RawParam] | None:
        """The parameters `node` creates, or None when it builds no module."""
        if isinstance(node, ast.Call):
            return self._call(node, frame)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self._comprehension(node, frame)
        if isinstance(node, (ast.List, ast.Tuple)):
            return self._items(node.elts, frame)
        if isinstance(node, ast.Name):
            return self.local_modules.get(node.id)
        if isinstance(node, ast.Starred):
            return self.expression(node.value, frame)
        if isinstance(node, ast.IfExp):
            sides = [self.expression(side, frame) for side in (node.body, node.orelse)]
            if all(side is None for side in sides):
                return None
            self.resolver.note(f"`{ast.unparse(node)}` is not decided statically: both sides are counted")
            return [p for side in sides for p in side or []]
        return None

    def _items(self, elements: list[ast.expr], frame: Frame) -> list[RawParam] | None:
        """`[a, b]` or `Sequential(a, b)`: item i is `[i]`; a starred item spreads its own items."""
        found: list[RawParam] = []
        index = 0
        any_module = False
        for element in elements:
            params = self.expression(element, frame)
            if params is None:
                index += 1
                continue
            any_module = True
            if isinstance(element, ast.Starred):
                found += params
                index += _item_count(params)
            else:
                found += [p.under(f"[{index}]") for p in params]
                index += 1
        return found if any_module else None

    def _call(self, node: ast.Call, frame: Frame) -> list[RawParam] | None:
        func = self.evaluator.evaluate(node.func, frame)
        for option in options(func):
            if isinstance(option, Ref) and option.qualname in LAYER_NAMES:
                return self._layer(option.qualname, node, frame, layer_params)
            if isinstance(option, Ref) and option.qualname in _VARIABLES:
                return self._layer(option.qualname, node, frame, lambda call: [variable_param(call)])
            if isinstance(option, Ref) and option.qualname in _CONTAINERS:
                return (
                    self._items(node.args, frame)
                    if option.qualname.endswith("Sequential")
                    else (self.expression(node.args[0], frame) if node.args else None)
                )
            if isinstance(option, ClassV) and self.resolver.is_module(option.cls, frame):
                args, kwargs = self._arguments(node, frame)
                return self.resolver.resolve_class(
                    option.cls, args, kwargs, frame, self.stack, self.depth + 1
                )
            if isinstance(option, FunctionV):
                return self._function(option.func, node, frame)
        return None

    def _layer(
        self, qualname: str, node: ast.Call, frame: Frame, read: Callable[[CallArgs], list[LayerParam]]
    ) -> list[RawParam]:
        if not self.resolver.spend():
            return []
        args, kwargs = self._arguments(node, frame)
        call = CallArgs(self.evaluator, self.resolver.library, qualname, args, kwargs, node, frame)
        levels = self.stack.levels if self.stack is not None else ()
        line = frame.line_of(node)
        return [
            RawParam(ParamPath().under(p.name), p.shape, p.dtype, p.annotation, levels, line)
            for p in read(call)
        ]

    def _function(self, info: FunctionInfo, node: ast.Call, frame: Frame) -> list[RawParam] | None:
        """A factory (`create_blocks(rngs)`): what its return statement builds, stacked once per
        `nnx.vmap` around it. A function defined in this `__init__` sees its locals."""
        returns = [r for r in info.returns if r.value is not None]
        if not returns or frame.call_depth >= self.evaluator.limits.call_depth:
            return None
        args, kwargs = self._arguments(node, frame)
        bound = self.evaluator.bind_arguments(info, args, kwargs, None, frame)
        nested = info.parent is self.init.scope
        defined = frame if nested else Frame(info.module, info.parent, info.segment, None)
        stack = stacked_context(self.evaluator, info, defined, bound, self.stack)
        closure = {**frame.locals, **bound} if nested else bound
        body = _Body(self.resolver, info, "", stack if isinstance(stack, StackV) else None, self.depth + 1)
        body.local_modules = dict(self.local_modules) if nested else {}
        ret = returns[0]
        inner = Frame(
            info.module,
            info.scope,
            info.segment,
            info.scope.order_of.get(id(ret)),
            closure,
            frame.call_depth + 1,
        )
        assert ret.value is not None
        return body.expression(ret.value, inner)

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp, frame: Frame) -> list[RawParam] | None:
        """`[Block(cfg) for _ in range(n)]`: n copies of one resolution when the item does not use
        the loop variables, else each item with its own bindings."""
        names = sorted({n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)})
        probe = ast.copy_location(
            ast.ListComp(ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load()), node.generators),
            node,
        )
        items = self.evaluator.evaluate(probe, frame)
        uses_loop = any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node.elt))
        if not isinstance(items, Seq) or (uses_loop and len(items.items) > MAX_UNROLLED):
            params = self.expression(node.elt, frame)
            if params is not None:
                self.resolver.note(
                    f"the length of `{ast.unparse(node)[:60]}` at line {frame.line_of(node) + 1} is not known: "
                    "its item is counted once"
                )
                return [p.under("[*]") for p in params]
            return None
        if not uses_loop:
            params = self.expression(node.elt, frame)
            if params is None or not items.items:
                return params
            return [p.under("", [f"[{i}]" for i in range(len(items.items))]) for p in params]
        found: list[RawParam] = []
        for index, item in enumerate(items.items):
            values = item.items if isinstance(item, Seq) else ()
            scoped = replace(frame, locals={**frame.locals, **dict(zip(names, values))})
            params = self.expression(node.elt, scoped)
            if params is None:
                return None
            found += [p.under(f"[{index}]") for p in params]
        return found

    def _arguments(self, node: ast.Call, frame: Frame) -> tuple[list[Value], dict[str, Value]]:
        evaluate = self.evaluator.evaluate
        args: list[Value] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                spread = self.evaluator.iterate(evaluate(arg.value, frame), frame)
                args.extend(spread.items if isinstance(spread, Seq) else ())
            else:
                args.append(evaluate(arg, frame))
        return args, {k.arg: evaluate(k.value, frame) for k in node.keywords if k.arg is not None}


def _item_count(params: list[RawParam]) -> int:
    """How many list items a spread (`*[Block() for _ in range(n)]`) contributed."""
    firsts = [p.where.pieces[0] for p in params if p.where.pieces and p.where.pieces[0][0].startswith("[")]
    return max((len(piece) for piece in firsts), default=1)
