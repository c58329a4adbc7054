"""A small, bounded abstract interpreter over Python ASTs. It never executes user code.

It answers "what is this expression?" with a Value: numbers with provenance, meshes, specs,
arrays with shapes, config instances, or Unknown. Every evaluation is bounded (steps, integer
size, collection size, call and expression depth) so hostile or huge inputs end quickly with
Unknown instead of hanging; the limits are documented in docs/architecture.md.

This module holds the evaluator's state, its budgets and the dispatch of each expression to the
module of `analysis/evaluation/` that evaluates its kind; the rest of shardls imports the
evaluator's names (`Evaluator`, `Frame`, `Limits`, ...) from here.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar, cast, overload

from shardls.analysis.definitions import ClassInfo, FunctionInfo
from shardls.analysis.evaluation import bindings, calls, choices, containers, names, objects, operators
from shardls.analysis.evaluation.frame import Frame
from shardls.analysis.evaluation.interfaces import LibraryCalls, ModuleResolver, Reads
from shardls.analysis.evaluation.known_values import bind_target, truthiness
from shardls.analysis.evaluation.limits import BudgetExceeded, Limits
from shardls.analysis.evaluation.names import BindingMemos
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.scopes import Scope
from shardls.analysis.sharded.events import TypeRecorder
from shardls.analysis.source import Segment
from shardls.analysis.values import MeshV, Unknown, Value

if TYPE_CHECKING:
    from shardls.analysis.evaluation.frame import ExpressionHandlers
    from shardls.analysis.walking.contexts import Context

_DISPATCH: ExpressionHandlers = {
    **operators.EXPRESSIONS,
    **containers.EXPRESSIONS,
    **names.EXPRESSIONS,
    **objects.EXPRESSIONS,
    **calls.EXPRESSIONS,
    **choices.EXPRESSIONS,
}
"""The function that evaluates each type of expression node (one dict lookup per node)."""


class EvaluationState(NamedTuple):
    """Where the code being evaluated runs, as the walker set it (see `Evaluator.context_mesh`,
    `tracing` and `context`)."""

    context_mesh: MeshV | None
    tracing: bool | None
    context: Context | None


Part = TypeVar("Part")


class _StatePart(Generic[Part]):
    """One part of `Evaluator.state`, read and set as an attribute of the evaluator. Reading it
    is noted (`Evaluator.state_read`): what is computed from it holds only where it is the same."""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, evaluator: None, owner: type) -> _StatePart[Part]: ...

    @overload
    def __get__(self, evaluator: Evaluator, owner: type) -> Part: ...

    def __get__(self, evaluator: Evaluator | None, owner: type) -> _StatePart[Part] | Part:
        if evaluator is None:
            return self
        evaluator.state_read = True
        return cast(Part, getattr(evaluator.state, self._name))

    def __set__(self, evaluator: Evaluator, value: Part) -> None:
        parts: dict[str, object] = {self._name: value}
        evaluator.state = evaluator.state._replace(**parts)  # type: ignore[arg-type]


class Evaluator:
    """The interpreter: its state, budgets and caches. Each kind of expression and operation is
    a function of the module of its concern (`analysis/evaluation/`), bound below as a method:
    callers ask `evaluator.call(...)`, and `eval` costs one dict lookup per node."""

    context_mesh = _StatePart["MeshV | None"]()
    """The mesh `jax.set_mesh` makes current where the statement being analysed runs: what a
    bare spec means for sharding in types."""
    tracing = _StatePart["bool | None"]()
    """Whether the code being evaluated is traced (under `jax.jit`) rather than run eagerly;
    None when the analysis does not know. JAX indexes a concrete sharded array differently."""
    context = _StatePart["Context | None"]()
    """The walker's context of the statement being analysed (mesh, logical rules, eager
    sharding, stacking): what Flax creates a layer's parameters with there."""

    def __init__(
        self,
        resolver: ModuleResolver,
        library: LibraryCalls,
        limits: Limits | None = None,
        budget: int | None = None,
    ) -> None:
        """`budget`: the steps all questions together may take (see `Limits.file_budget`); once
        spent, every question answers Unknown at once."""
        self.resolver = resolver
        self.library = library
        self.limits = limits or Limits()
        self._pools: list[int] = [] if budget is None else [budget]
        """Steps left in each budget in force (the evaluator's, a file's, a statement's)."""
        self._allowed = self.limits.steps
        self._asking = False
        self.memos = BindingMemos()
        self._steps = 0
        self._depth = 0
        self._classes: dict[int, ClassInfo] = {}
        self._functions: dict[int, FunctionInfo] = {}
        self.literals: dict[tuple[int, int, str], tuple[ast.expr, Value]] = {}
        """Each literal's value where it is written (by node, segment line and module: all its
        origin says), with the node kept alive; a loop or comprehension reads the same literals
        thousands of times."""
        self.quiet_names: dict[tuple[int, int], tuple[ast.expr, Scope, frozenset[str] | None]] = {}
        """`evaluation/unused.py`'s names read by an argument, per expression and scope (both
        kept alive)."""
        self.reads: Reads | None = None
        """When set, every module-level name and workspace module the evaluation reads is noted."""
        self.typing: TypeRecorder | None = None
        """When set, every operation evaluated on arrays of known sharded type is recorded."""
        self.state = EvaluationState(None, None, None)
        """`context_mesh`, `tracing` and `context`, read here without noting a read
        (`state_read`): to set them back, to derive a callee's, or to keep an answer by them."""
        self.state_read = False
        """Whether `context_mesh`, `tracing` or `context` was read since this was last cleared: a
        function's value computed without reading them holds in every such state
        (`calls._returned_once`)."""
        self.deepest = -1
        """The deepest call depth `limits.call_depth` was checked at since this was last set
        (`within_call_depth`): a function's value computed without a check at or beyond the
        limit holds wherever the same checks stay within it (`calls._returned_once`)."""
        self.mesh_at: Callable[[Segment], MeshV | None] | None = None
        """The mesh `jax.set_mesh` makes current where a top-level segment of `analysed` runs."""
        self.analysed: ModuleInfo | None = None
        self.branching = 0
        """How many values with several options (`Choice`) the current evaluation is inside: a
        result computed from one option is one possibility, not a certainty."""
        self.exhausted = 0
        """How many times a statement's or file's budget ran out (in a question, or in the walk's
        `spend`): a result computed meanwhile depends on where it was computed, so it is not
        kept for reuse (`analysis/reuse.py`). A question that runs out of its own `steps` gives
        the same answer wherever it is asked."""

    def within_call_depth(self, frame: Frame) -> bool:
        """Whether a workspace function may be called from `frame` (its call depth is below
        `limits.call_depth`), noting the depth checked (`deepest`)."""
        depth = frame.call_depth
        if depth > self.deepest:
            self.deepest = depth
        return depth < self.limits.call_depth

    @property
    def budget_left(self) -> int | None:
        """Steps left of the budgets in force (None: unbounded); 0 once one ran out."""
        return min(self._pools, default=None)

    @property
    def steps_left_here(self) -> int:
        """Steps left of the innermost budget (`budget`): what a statement's analysis spent."""
        return self._pools[-1]

    def spend(self, steps: int) -> bool:
        """Charge work done between questions (the walker's) to the budgets in force, so that
        they bound all the work on a statement or file; False once one is used up. In place and
        without a new list: the walker charges every statement it visits (435,000 times in a check
        of maxtext)."""
        pools = self._pools
        used_up = False
        for index, left in enumerate(pools):
            if left <= steps:
                left, used_up = steps, True
            pools[index] = left - steps
        if not used_up:
            return True
        self.exhausted += 1
        return False

    @contextlib.contextmanager
    def budget(self, steps: int) -> Iterator[None]:
        """Questions asked inside take at most `steps` steps together (and what is left of any
        budget around it)."""
        self._pools.append(steps)
        try:
            yield
        finally:
            self._pools.pop()

    # -- entry points -------------------------------------------------------------------------

    def evaluate(self, node: ast.expr, frame: Frame) -> Value:
        """One question, with a fresh step budget (what is left of the budgets in force, if less); never
        raises for any input. Asked while another question runs (a library function evaluating
        an argument), it is part of that question and shares its budget."""
        return self.answer(lambda: self.eval(node, frame))

    def answer(self, compute: Callable[[], Value]) -> Value:
        """`compute()` as one question, as `evaluate` asks one expression: for a question that is
        not one expression (a jitted function's body run in order, `recognizers/body_result.py`)."""
        if self._asking:
            return compute()
        self._steps = 0
        self._depth = 0
        self._allowed = min([self.limits.steps, *self._pools])
        self._asking = True
        try:
            return compute()
        except BudgetExceeded:
            if self._allowed < self.limits.steps:
                self.exhausted += 1
                return Unknown("the evaluation budget of this statement or file is used up")
            return Unknown("evaluation budget exhausted")
        except RecursionError:
            return Unknown("expression too deeply nested")
        finally:
            self._asking = False
            self._pools[:] = [max(0, left - self._steps) for left in self._pools]

    def eval(self, node: ast.expr, frame: Frame) -> Value:
        """One step of a question; called outside any (`mro`, `instantiate` from a recognizer),
        it starts one, so that no budget error escapes."""
        if not self._asking:
            return self.evaluate(node, frame)
        self._steps += 1
        if self._steps > self._allowed:
            raise BudgetExceeded
        self._depth += 1
        try:
            if self._depth > self.limits.expr_depth:
                return Unknown("expression too deeply nested")
            method = _DISPATCH.get(type(node))
            if method is None:
                return Unknown(f"{type(node).__name__} is not evaluated")
            result: Value = method(self, node, frame)
            return result
        finally:
            self._depth -= 1

    # -- infos (one per AST node, so caches keyed by them survive across questions) ----------

    def class_info(
        self, node: ast.ClassDef, module: ModuleInfo, segment: Segment, parent: Scope
    ) -> ClassInfo:
        """The class's info: the first this evaluator was asked for, made once per module for all
        evaluators (`ModuleInfo.class_infos`)."""
        info = self._classes.get(id(node))
        if info is None:
            key = (id(node), id(segment), id(parent))
            info = module.class_infos.get(key)
            if info is None:
                info = module.class_infos[key] = ClassInfo(node, module, segment, parent)
            self._classes[id(node)] = info
        return info

    def function_info(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        module: ModuleInfo,
        segment: Segment,
        parent: Scope,
        owner: ClassInfo | None = None,
    ) -> FunctionInfo:
        """The function's info: the first this evaluator was asked for, a method's from its class,
        another's made once per module for all evaluators (`ModuleInfo.function_infos`)."""
        info = self._functions.get(id(node))
        if info is None:
            info = owner.methods[node.name] if owner and node.name in owner.methods else None
            if info is None and owner is None:
                key = (id(node), id(segment), id(parent))
                info = module.function_infos.get(key)
                if info is None:
                    info = module.function_infos[key] = FunctionInfo(node, module, segment, parent)
            info = info or FunctionInfo(node, module, segment, parent, owner)
            self._functions[id(node)] = info
        return info

    # -- the evaluation of each concern, in its module of `analysis/evaluation/` ------------

    bounded = operators.bounded
    binop = operators.binop
    subscript = containers.subscript
    iterate = containers.iterate
    lookup = names.lookup
    bindings_value = names.bindings_value
    binding_value = names.binding_value
    param_default = bindings.param_default
    module_attribute = bindings.module_attribute
    attribute = objects.attribute
    assigned_attribute = objects.assigned_attribute
    class_attribute = objects.class_attribute
    instance_attribute = objects.instance_attribute
    mro = objects.mro
    base_qualnames = objects.base_qualnames
    is_enum = objects.is_enum
    instantiate = objects.instantiate
    call = calls.call
    call_function = calls.call_function
    call_arguments = calls.call_arguments
    bind_arguments = calls.bind_arguments
    choice = choices.choice
    branches = choices.branches


__all__ = [
    "BudgetExceeded",
    "Evaluator",
    "Frame",
    "LibraryCalls",
    "Limits",
    "ModuleResolver",
    "Reads",
    "bind_target",
    "truthiness",
]
