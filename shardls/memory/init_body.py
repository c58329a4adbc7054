"""One run of a module's `__init__` (or of a factory it calls), statement by statement: what its
attributes, local lists and local modules hold, with `if` branches decided where possible and
locals tracked through loops."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.evaluator import Frame, bind_target, truthiness
from shardls.analysis.library.nnx import StackV
from shardls.analysis.recognizers.nnx.params import layer_params
from shardls.analysis.values import Unknown, Value, as_str
from shardls.memory.init_loops import loop, stored
from shardls.memory.module_builds import ModuleBuilds
from shardls.memory.module_lists import Held, ModuleList, item_params, joined_attributes, params_of
from shardls.memory.raw_param import RawParam

if TYPE_CHECKING:
    from shardls.memory.resolve import ModelResolver


class InitBody:
    """One run of one `__init__` (or factory): what its attributes and locals hold."""

    def __init__(
        self,
        resolver: ModelResolver,
        init: FunctionInfo,
        self_name: str,
        stack: StackV | None,
        depth: int,
        pytree: bool = True,
    ) -> None:
        self.resolver = resolver
        self.evaluator = resolver.evaluator
        self.init = init
        self.self_name = self_name
        self.stack = stack
        self.depth = depth
        self.pytree = pytree
        self.local_modules: dict[str, list[RawParam]] = {}
        self.lists: dict[str, ModuleList] = {}
        self.attrs: dict[str, Held] = {}
        self.loops = 0
        """How many loops the current statement is in: there, locals are tracked in the frame."""
        self.writes = 0
        """Attribute stores and list changes with parameters so far (did a branch build anything?)."""
        self.inherited: list[RawParam] = []
        """What `super().__init__(...)` of a Flax layer base created."""
        self.builds = ModuleBuilds(self)
        """What the expressions of this run build."""

    def params(self, body: list[ast.stmt], frame: Frame) -> list[RawParam]:
        """Run `body` and list what each attribute holds, in the order they were first set."""
        self.run(body, frame)
        found: list[RawParam] = list(self.inherited)
        for name, held in self.attrs.items():
            params = held.params() if isinstance(held, ModuleList) else held
            if isinstance(held, ModuleList) and held.plain and params and self.pytree:
                self.resolver.note(
                    f"`{self.self_name}.{name}` is a plain Python list of modules: Flax 0.12 rejects it "
                    "(ValueError: wrap it in nnx.List(...)); its parameters are counted as an nnx.List's"
                )
            found += [p.under(name) for p in params]
        return found

    def run(self, body: list[ast.stmt], frame: Frame) -> Frame:
        """Run statements in order; the frame returned has the locals a loop body tracked."""
        for stmt in body:
            frame = self.statement(stmt, frame)
        return frame

    def statement(self, stmt: ast.stmt, frame: Frame) -> Frame:
        here = replace(frame, position=self.init.scope.order_of.get(id(stmt)))
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            targets: list[ast.expr] = list(stmt.targets) if isinstance(stmt, ast.Assign) else [stmt.target]
            self._assignment(targets, stmt.value, here)
            return self._tracked(targets, stmt.value, frame, here)
        if isinstance(stmt, ast.AugAssign):
            return self._augmented(stmt, frame, here)
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            if _is_super_init(stmt.value):
                self._inherited(stmt.value, here)
            else:
                self._mutation(stmt.value, here)
        elif isinstance(stmt, ast.If):
            return self._branches(stmt, frame, here)
        elif isinstance(stmt, (ast.With, ast.Try)):
            return self.run(stmt.body, frame)
        elif isinstance(stmt, ast.For):
            return loop(self, stmt, frame, here)
        return frame

    def _assignment(self, targets: list[ast.expr], value: ast.expr, frame: Frame) -> None:
        held = self._held(value, frame)
        if held is not None:
            for target in targets:
                self._bind(target, held)

    def _held(self, node: ast.expr, frame: Frame) -> Held | None:
        """A list expression is a list that later statements may fill (a local name holds the same
        list, as in Python); anything else holds the parameters of the modules it builds."""
        if isinstance(node, ast.Name) and node.id in self.lists:
            return self.lists[node.id]
        if self.builds.is_list(node, frame):
            params = self.builds.expression(node, frame) or []
            return ModuleList.of(
                params, self.builds.length(node, frame), not self.builds.is_wrapped(node, frame)
            )
        return self.builds.expression(node, frame)

    def _bind(self, target: ast.expr, held: Held) -> None:
        attribute = self._attribute(target)
        if attribute is not None:
            self.attrs[attribute] = held
            self.writes += bool(params_of(held))
        elif isinstance(target, ast.Name):
            self.lists.pop(target.id, None)
            self.local_modules.pop(target.id, None)
            if isinstance(held, ModuleList):
                self.lists[target.id] = held
            else:
                self.local_modules[target.id] = held
        elif isinstance(target, (ast.Tuple, ast.List)):
            params = held.params() if isinstance(held, ModuleList) else held
            for index, element in enumerate(target.elts):
                if not isinstance(element, ast.Starred):
                    self._bind(element, item_params(params, index))

    def _attribute(self, target: ast.expr) -> str | None:
        """`self.x` as a target: `x`."""
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            return target.attr if target.value.id == self.self_name and self.self_name else None
        return None

    def _branches(self, stmt: ast.If, frame: Frame, here: Frame) -> Frame:
        """A decided test runs one branch; an undecided one counts both (and says so)."""
        truth = truthiness(self.evaluator.evaluate(stmt.test, here))
        if truth is not None:
            return self.run(stmt.body if truth else stmt.orelse, frame)
        before, writes = dict(self.attrs), self.writes
        one = self.run(stmt.body, frame)
        after_body, self.attrs = self.attrs, dict(before)
        other = self.run(stmt.orelse, frame)
        self.attrs = joined_attributes(before, after_body, self.attrs)
        if self.writes != writes:
            line = here.line_of(stmt) + 1
            self.resolver.note(
                f"`if {ast.unparse(stmt.test)}` at line {line} is not decided statically: "
                "the parameters of both branches are counted"
            )
        return self._merged(frame, one, other)

    def _merged(self, frame: Frame, one: Frame, other: Frame) -> Frame:
        """After an undecided `if` in a loop, a local either branch changed may hold either value."""
        if one.locals is other.locals:
            return one
        names = {n for n in {*one.locals, *other.locals} if one.locals.get(n) is not other.locals.get(n)}
        changed = {
            n: self.evaluator.choice([one.locals[n], other.locals[n]])
            for n in names
            if n in one.locals and n in other.locals
        }
        kept = {n: v for n, v in frame.locals.items() if n not in names}
        return replace(frame, locals=self.resolver.keep({**kept, **changed}))

    # -- lists filled by statements ------------------------------------------------------------

    def _inherited(self, call: ast.Call, frame: Frame) -> None:
        """`super().__init__(...)` in a subclass of a Flax layer creates that layer's parameters
        on this module itself."""
        owner = self.init.owner
        layer = self.resolver.inherited_layer(owner, frame) if owner is not None else None
        if layer is not None:
            self.inherited += self.builds.layer(layer, call, frame, layer_params)

    def _mutation(self, call: ast.Call, frame: Frame) -> None:
        """`x.append(m)`, `x.extend(ms)` on a list of this `__init__`, and `setattr(self, name, m)`."""
        func = call.func
        if isinstance(func, ast.Name) and func.id == "setattr":
            self._setattr(call, frame)
            return
        if not (isinstance(func, ast.Attribute) and func.attr in ("append", "extend") and call.args):
            return
        params = self.builds.expression(call.args[0], frame)
        container = self._container(func.value, params is not None)
        if container is None:
            return
        if func.attr == "append":
            container.append(params or [])
        else:
            container.extend(params or [], self.builds.length(call.args[0], frame))
        self.writes += bool(params)

    def _augmented(self, stmt: ast.AugAssign, frame: Frame, here: Frame) -> Frame:
        """`x += [m, ...]` extends a list; any other `+=` on a name is tracked like an assignment."""
        if isinstance(stmt.op, ast.Add) and self.builds.is_list(stmt.value, here):
            params = self.builds.expression(stmt.value, here)
            container = self._container(stmt.target, params is not None)
            if container is not None:
                container.extend(params or [], self.builds.length(stmt.value, here))
                self.writes += bool(params)
                return frame
        if not isinstance(stmt.target, ast.Name) or not self._tracks({stmt.target.id}, frame):
            return frame
        name = stmt.target.id
        previous = self.evaluator.lookup(name, here)
        value = self.evaluator.binop(
            type(stmt.op), previous, self.evaluator.evaluate(stmt.value, here), stmt, here
        )
        return self.with_locals(frame, {name: value})

    def _container(self, node: ast.expr, create: bool) -> ModuleList | None:
        """The list `node` names (`self.layers`, `layers`); one of unknown length is made for an
        attribute or name this `__init__` did not set, when something is added to it."""
        attribute = self._attribute(node)
        if attribute is not None:
            held = self.attrs.get(attribute)
            if isinstance(held, ModuleList):
                return held
            if held is None and not create:
                return None
            container = self.attrs[attribute] = ModuleList.of(held or [], None, False)
            return container
        if isinstance(node, ast.Name):
            if node.id in self.lists:
                return self.lists[node.id]
            if create:
                known = self.local_modules.pop(node.id, [])
                container = self.lists[node.id] = ModuleList.of(known, None, True)
                return container
        return None

    def _setattr(self, call: ast.Call, frame: Frame) -> None:
        """`setattr(self, f"layer_{i}", Block(...))`: an attribute whose name the analysis computes."""
        owner = call.args[0] if len(call.args) == 3 else None
        if not (isinstance(owner, ast.Name) and self.self_name and owner.id == self.self_name):
            return
        if not isinstance(self.evaluator.evaluate(call.func, frame), Unknown):
            return  # a `setattr` of the user's own
        held = self._held(call.args[2], frame)
        if held is None:
            return
        name = as_str(self.evaluator.evaluate(call.args[1], frame))
        if name is None:
            self.resolver.note(
                f"`{ast.unparse(call)[:60]}` at line {frame.line_of(call) + 1} sets an attribute whose "
                "name is not known: not counted"
            )
            return
        self.attrs[name] = held
        self.writes += bool(params_of(held))

    # -- locals in loops -----------------------------------------------------------------------

    def in_loop(self, body: list[ast.stmt], frame: Frame) -> Frame:
        """Run a loop's body, where assignments to locals are tracked in the frame."""
        self.loops += 1
        try:
            return self.run(body, frame)
        finally:
            self.loops -= 1

    def containers(self) -> list[ModuleList]:
        """The lists this run fills, each once (a local name and an attribute may hold the same)."""
        held = [*self.lists.values(), *(h for h in self.attrs.values() if isinstance(h, ModuleList))]
        return list({id(c): c for c in held}.values())

    def _tracked(self, targets: list[ast.expr], value: ast.expr, frame: Frame, here: Frame) -> Frame:
        """In a loop, a local's new value goes into the frame, so that the rest of the body and the
        next iteration read it (the scope's bindings know nothing of iterations)."""
        names = {name for target in targets for name in stored(target)}
        if not self._tracks(names, frame):
            return frame
        evaluated = self.evaluator.evaluate(value, here)
        bound: dict[str, Value] = {}
        for target in targets:
            if isinstance(target, (ast.Name, ast.Tuple, ast.List)) and not bind_target(
                target, evaluated, bound
            ):
                bound.update({name: Unknown("unpacked", symbol=name) for name in stored(target)})
        return self.with_locals(frame, bound)

    def _tracks(self, names: set[str], frame: Frame) -> bool:
        """Assignments go into the frame in a loop, and after one for the names the frame already
        holds (a loop's last values, or parameters), so that no stale value hides a new one."""
        return bool(names) and (self.loops > 0 or not names.isdisjoint(frame.locals))

    def with_locals(self, frame: Frame, names: Mapping[str, Value]) -> Frame:
        """`frame` with `names` bound, its locals kept alive by the resolver (`ModelResolver.keep`)."""
        if not names:
            return frame
        return replace(frame, locals=self.resolver.keep({**frame.locals, **names}))

    def factory(self, info: FunctionInfo, stack: StackV | None, nested: bool) -> InitBody:
        """A run of a factory this body calls (`create_blocks(rngs)`), one module deeper: one
        defined in this `__init__` (`nested`) sees its lists and local modules."""
        body = InitBody(self.resolver, info, "", stack, self.depth + 1)
        body.local_modules = dict(self.local_modules) if nested else {}
        body.lists = dict(self.lists) if nested else {}
        return body


def _is_super_init(call: ast.Call) -> bool:
    """`super().__init__(...)`."""
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "__init__"
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "super"
    )
