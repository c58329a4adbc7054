"""Every parameter a `nnx.Module` subclass creates in `__init__`, with its attribute path.

The per-call sites of the analysis name a parameter after its attribute (`up.kernel`) and skip
unannotated ones; a memory total needs all of them, each under its full path
(`layers[0..79].mlp.up.kernel`) and counted once per copy. So this walks `__init__` statement by
statement with the analysis' evaluator (which knows configs, defaults and Flax) and follows what
each `self.x = ...` builds: Flax layers (through the recognizer's shape formulas), submodules
(their own `__init__`, with the arguments of this call), lists and comprehensions of them, lists
filled in `for` loops (`self.layers.append(...)`), and functions under `nnx.vmap`/`nnx.scan`
(decorated, or called as `nnx.vmap(f, ...)(rngs)`), whose layers gain a stacked axis.

Nothing is executed: a loop body runs once per iteration on the evaluator's values, and only
once (its items repeated) when nothing in it depends on the iteration, like a comprehension.

This module resolves classes (`ModelResolver`); one run of an `__init__` is `init_body.py`, its
loops `init_loops.py`, what its expressions build `module_builds.py`, the lists it fills
`module_lists.py`, and the parameters it finds `raw_param.py`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from shardls.analysis.definitions import ClassInfo, FunctionInfo
from shardls.analysis.evaluator import Evaluator, Frame, truthiness
from shardls.analysis.library import Library
from shardls.analysis.library.nnx import StackV
from shardls.analysis.recognizers.nnx.layers import LAYER_NAMES
from shardls.analysis.values import InstanceV, Unknown, Value
from shardls.memory.init_body import InitBody
from shardls.memory.raw_param import RawParam

MODULE_BASE = "flax.nnx.Module"
MAX_DEPTH = 10
"""Submodules nested deeper than this are not followed (and a note says so)."""
MAX_STEPS = 20_000
"""Layer calls, module constructions and loop iterations resolved per model (identical layers
resolve once: the 70B example takes 13)."""
EXHAUSTED = "the evaluation budget for this model is used up: what it did not reach is not counted"


@dataclass(frozen=True)
class SubmoduleCall:
    """A module class built inside the model, with the arguments it got: what sizes that class
    when nothing else instantiates it."""

    cls: ClassInfo
    args: list[Value]
    kwargs: dict[str, Value]
    frame: Frame


class ModelResolver:
    """Resolves classes of one workspace; `notes` collects what had to be assumed."""

    def __init__(self, evaluator: Evaluator, library: Library) -> None:
        self.evaluator = evaluator
        self.library = library
        self.notes: list[str] = []
        self.budget = MAX_STEPS
        self.submodule_calls: dict[int, SubmoduleCall] = {}
        """The first call of each module class built inside the model being resolved."""
        self._building: list[int] = []
        self._lambdas: dict[int, tuple[ast.Lambda, FunctionInfo]] = {}
        self._kept: list[dict[str, Value]] = []

    def start(self) -> None:
        """A new model: fresh notes, a fresh budget and no submodule calls yet."""
        self.notes = []
        self.budget = MAX_STEPS
        self.submodule_calls = {}

    def spend(self) -> bool:
        """One layer, module or loop iteration more; False (with a note) once the budget, or the
        file's evaluation budget, is used up, so that a model built in nested loops cannot take
        unbounded time."""
        self.budget -= 1
        if self.budget < 0:
            self.note(f"more than {MAX_STEPS} layers and modules to resolve: the rest is not counted")
        elif self.evaluator.budget_left == 0:
            self.note(EXHAUSTED)
            return False
        return self.budget >= 0

    def is_module(self, cls: ClassInfo, frame: Frame) -> bool:
        """A `nnx.Module` subclass, also through a Flax layer (`class ScaledEmbed(nnx.Embed)`)."""
        bases = self.evaluator.base_qualnames(cls, frame)
        return MODULE_BASE in bases or not bases.isdisjoint(LAYER_NAMES)

    def inherited_layer(self, cls: ClassInfo, frame: Frame) -> str | None:
        """The Flax layer whose `__init__` a subclass runs (inherited, or through `super()`)."""
        return min(self.evaluator.base_qualnames(cls, frame) & LAYER_NAMES, default=None)

    def init_of(self, cls: ClassInfo, frame: Frame) -> FunctionInfo | None:
        """The `__init__` a workspace class runs, if one of the workspace classes defines it."""
        return next(
            (k.methods["__init__"] for k in self.evaluator.mro(cls, frame) if "__init__" in k.methods), None
        )

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
        init = self.init_of(cls, frame)
        if init is None:
            return []
        if depth > MAX_DEPTH or id(cls.node) in self._building:
            self.note(
                f"{cls.name} is nested in itself or more than {MAX_DEPTH} modules deep: not counted there"
            )
            return []
        if not self.spend():
            return []
        if depth > 0:
            self.submodule_calls.setdefault(id(cls.node), SubmoduleCall(cls, args, kwargs, frame))
        locals_ = self.evaluator.bind_arguments(init, args, kwargs, Unknown("self"), frame)
        self_name = init.params[0].arg if init.params else "self"
        locals_.pop(self_name, None)
        locals_[self_name] = InstanceV(cls, tuple(locals_.items()))
        inner = Frame(init.module, init.scope, init.segment, None, locals_, frame.call_depth + 1)
        self._building.append(id(cls.node))
        try:
            body = InitBody(self, init, self_name, stack, depth, self._is_pytree(cls, frame))
            return body.params(init.node.body, inner)
        finally:
            self._building.pop()

    def _is_pytree(self, cls: ClassInfo, frame: Frame) -> bool:
        """`class M(nnx.Module, pytree=False)` (or a base declared so) may keep modules in plain lists."""
        for klass in self.evaluator.mro(cls, frame):
            for keyword in klass.node.keywords:
                if (
                    keyword.arg == "pytree"
                    and truthiness(self.evaluator.evaluate(keyword.value, frame)) is False
                ):
                    return False
        return True

    def lambda_info(self, node: ast.Lambda, frame: Frame) -> FunctionInfo:
        """A lambda as the function it is (`def <lambda>(r): return Block(r)`), so that
        `nnx.vmap(lambda r: Block(r), ...)` resolves like a named factory (one per lambda)."""
        known = self._lambdas.get(id(node))
        if known is not None:
            return known[1]
        body = ast.copy_location(ast.Return(node.body), node.body)
        function = ast.copy_location(
            ast.FunctionDef(name="<lambda>", args=node.args, body=[body], decorator_list=[], returns=None),
            node,
        )
        info = FunctionInfo(function, frame.module, frame.segment, frame.scope)
        self._lambdas[id(node)] = (node, info)
        return info

    def keep(self, locals_: dict[str, Value]) -> dict[str, Value]:
        """Locals made while unrolling a loop stay alive with the resolver: the evaluator caches
        by the identity of a frame's locals, which must not be reused by a later dict."""
        self._kept.append(locals_)
        return locals_

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)
