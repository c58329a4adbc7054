"""A small, bounded abstract interpreter over Python ASTs. It never executes user code.

It answers "what is this expression?" with a Value: numbers with provenance, meshes, specs,
arrays with shapes, config instances, or Unknown. Every evaluation is bounded (steps, integer
size, collection size, call and expression depth) so hostile or huge inputs end quickly with
Unknown instead of hanging; the limits are documented in docs/architecture.md.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import itertools
import operator
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from shardls.analysis.facts import Span
from shardls.analysis.scopes import (
    Binding,
    ClassInfo,
    FunctionInfo,
    ModuleInfo,
    Scope,
    attribute_key,
    dotted_name,
    traced_by_decorator,
)
from shardls.analysis.shapes import array_operation
from shardls.analysis.sharded.auto_axes import under_auto_axes, without_types
from shardls.analysis.sharded.events import TypeEvent, TypeRecorder
from shardls.analysis.sharded.jit_types import decorated_call
from shardls.analysis.sharded.manual import shard_mapped_function_call
from shardls.analysis.sharded.operations import typed_binop, typed_subscript
from shardls.analysis.sharded.propagate import named
from shardls.analysis.source import Segment
from shardls.analysis.values import (
    ArrayV,
    BoundMethod,
    Choice,
    ClassV,
    Const,
    DictV,
    FunctionV,
    InstanceV,
    MeshV,
    ModuleV,
    Origin,
    Ref,
    Seq,
    SetV,
    ShardingV,
    SliceV,
    SpecV,
    Unknown,
    Value,
    as_int,
    assumption_of,
    options,
)
from shardls.core import parse_dtype

if TYPE_CHECKING:
    from shardls.analysis.walker import Context


@dataclass(frozen=True)
class Limits:
    steps: int = 20_000
    """Expression nodes evaluated per top-level question (a site, a hover)."""
    int_bits: int = 128
    """Integers beyond ±2**128 become Unknown (no shape is that large; `2**10**10` stays cheap)."""
    collection: int = 10_000
    """Longest tuple/list/range/string repetition the interpreter will build."""
    string: int = 100_000
    call_depth: int = 12
    """Nested calls into workspace functions."""
    expr_depth: int = 120
    """Nested expression depth (deeper expressions are Unknown, never a RecursionError)."""
    choices: int = 16
    """Most alternatives kept for one value (if/else chains)."""
    statement_steps: int = 40_000
    statement_steps_per_char: int = 8
    """Steps all the questions about one top-level statement may take together: this plus 8 per
    character of it. Hostile code then spends its own budget, not the next statement's."""
    file_steps: int = 150_000
    file_steps_per_char: int = 10
    file_steps_cap: int = 2_000_000
    """Steps all the questions about one file may take together: `file_steps` plus
    `file_steps_per_char` per character, at most `file_steps_cap`. Real code takes well under one
    step per character (0.1-0.3 measured); many nested comprehensions over rebound names made a
    4 KB file ask 2,200 questions of up to `steps` each (27 s) before these bounds."""

    def file_budget(self, chars: int) -> int:
        return min(self.file_steps + self.file_steps_per_char * chars, self.file_steps_cap)

    def statement_budget(self, chars: int) -> int:
        return self.statement_steps + self.statement_steps_per_char * chars


class BudgetExceeded(Exception):
    """Raised inside the interpreter when a question used up its step budget."""


class ModuleResolver(Protocol):
    def resolve(self, importer: ModuleInfo, dotted: str, level: int) -> ModuleInfo | None: ...


class LibraryCalls(Protocol):
    """What the interpreter knows about JAX, Flax, numpy and the standard library."""

    def canonical(self, qualname: str) -> str: ...

    def call(
        self,
        evaluator: Evaluator,
        qualname: str,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.Call,
        frame: Frame,
    ) -> Value | None: ...

    def attribute(
        self, evaluator: Evaluator, base: Value, attr: str, node: ast.AST, frame: Frame
    ) -> Value | None: ...

    def method(
        self,
        evaluator: Evaluator,
        method: BoundMethod,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.Call,
        frame: Frame,
    ) -> Value | None: ...

    def parameter(self, scope: Scope, name: str) -> Value | None: ...

    def subscript(
        self, evaluator: Evaluator, base: Value, index: Value | slice, frame: Frame
    ) -> Value | None: ...

    def instantiate(
        self,
        evaluator: Evaluator,
        cls: ClassInfo,
        args: list[Value],
        kwargs: dict[str, Value],
        node: ast.Call | None,
        frame: Frame,
    ) -> Value | None: ...


@dataclass
class Reads:
    """What an evaluation depended on outside its own statements (for incremental re-analysis)."""

    names: set[tuple[str, str]] = field(default_factory=set)
    """(module path, name) for every module-level name looked up."""
    modules: dict[str, ModuleInfo] = field(default_factory=dict)
    """Workspace modules read through imports, by path."""
    callees: set[str] = field(default_factory=set)
    """Names whose call sites were searched (a new caller changes the result)."""


@dataclass(frozen=True)
class Frame:
    """Where an expression is evaluated: module, scope, statement position and bound locals."""

    module: ModuleInfo
    scope: Scope
    segment: Segment
    position: int | None
    locals: Mapping[str, Value] = field(default_factory=dict)
    call_depth: int = 0

    def line_of(self, node: ast.AST) -> int:
        return self.segment.abs_line(getattr(node, "lineno", 1))

    def origin(self, text: str, node: ast.AST) -> Origin:
        return Origin(text, self.module.path, self.line_of(node))

    def span(self, node: ast.AST) -> Span:
        """The node's position in the file, columns as string indices (ast counts UTF-8 bytes)."""
        line = self.line_of(node)
        end_lineno = getattr(node, "end_lineno", None) or getattr(node, "lineno", None) or 1
        end_line = self.segment.abs_line(end_lineno)
        lines = self.module.source.lines
        return Span(
            line,
            _char_column(lines, line, getattr(node, "col_offset", 0)),
            end_line,
            _char_column(lines, end_line, getattr(node, "end_col_offset", None) or 0),
        )


_BINOPS: dict[type[ast.operator], Callable[[object, object], object]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
}

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], object]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}

_EMPTY_CALL = ast.Call(func=ast.Name("_"), args=[], keywords=[])
_BOOL = parse_dtype("bool")

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
        "print",
        "getattr",
        "object",
        "super",
    ]
)


class Evaluator:
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
        self._memo: dict[tuple[int, int], Value] = {}
        self._active: set[tuple[int, int]] = set()
        self._steps = 0
        self._depth = 0
        self._classes: dict[int, ClassInfo] = {}
        self._functions: dict[int, FunctionInfo] = {}
        self.reads: Reads | None = None
        """When set, every module-level name and workspace module the evaluation reads is noted."""
        self.typing: TypeRecorder | None = None
        """When set, every operation evaluated on arrays of known sharded type is recorded."""
        self.context_mesh: MeshV | None = None
        """The mesh `jax.set_mesh` makes current where the statement being analysed runs: what a
        bare spec means for sharding in types."""
        self.tracing: bool | None = None
        """Whether the code being evaluated is traced (under `jax.jit`) rather than run eagerly;
        None when the analysis does not know. JAX indexes a concrete sharded array differently."""
        self.mesh_at: Callable[[Segment], MeshV | None] | None = None
        """The mesh `jax.set_mesh` makes current where a top-level segment of `analysed` runs."""
        self.analysed: ModuleInfo | None = None
        self.context: Context | None = None
        """The walker's context of the statement being analysed (mesh, logical rules, eager
        sharding, stacking): what Flax creates a layer's parameters with there."""
        self.branching = 0
        """How many values with several options (`Choice`) the current evaluation is inside: a
        result computed from one option is one possibility, not a certainty."""
        self._memo_events: dict[tuple[int, int], tuple[TypeEvent, ...]] = {}
        self._reached: dict[tuple[int, int], bool] = {}
        self._reached_events: dict[tuple[int, int], tuple[TypeEvent, ...]] = {}
        self._memo_locals: dict[int, Mapping[str, Value]] = {}
        """The locals the memos above are keyed by (by id), kept alive so that no later call's
        locals can get the same id and be answered with another call's values."""
        self.exhausted = 0
        """How many times a statement's or file's budget ran out (in a question, or in the walk's
        `spend`): a result computed meanwhile depends on where it was computed, so it is not
        kept for reuse (`analysis/reuse.py`). A question that runs out of its own `steps` gives
        the same answer wherever it is asked."""

    @property
    def budget_left(self) -> int | None:
        """Steps left of the budgets in force (None: unbounded); 0 once one ran out."""
        return min(self._pools, default=None)

    def spend(self, steps: int) -> bool:
        """Charge work done between questions (the walker's) to the budgets in force, so that
        they bound all the work on a statement or file; False once one is used up."""
        self._pools[:] = [max(0, left - steps) for left in self._pools]
        if not self._pools or min(self._pools) > 0:
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
        if self._asking:
            return self.eval(node, frame)
        self._steps = 0
        self._depth = 0
        self._allowed = min([self.limits.steps, *self._pools])
        self._asking = True
        try:
            return self.eval(node, frame)
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
        info = self._classes.get(id(node))
        if info is None:
            info = ClassInfo(node, module, segment, parent)
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
        info = self._functions.get(id(node))
        if info is None:
            info = owner.methods[node.name] if owner and node.name in owner.methods else None
            info = info or FunctionInfo(node, module, segment, parent, owner)
            self._functions[id(node)] = info
        return info

    # -- numbers ----------------------------------------------------------------------------

    def bounded(self, value: object, node: ast.AST, frame: Frame, what: str = "literal") -> Value:
        """Wrap a Python value, refusing the ones too large to be a shape (or to keep in memory)."""
        if what == "computed":
            what = _expression_text(node)
        if isinstance(value, bool) or value is None or isinstance(value, float | complex | bytes):
            return Const(value, origin=frame.origin(what, node))
        if isinstance(value, int):
            if value.bit_length() > self.limits.int_bits:
                return Unknown("integer too large")
            return Const(value, origin=frame.origin(what, node))
        if isinstance(value, str):
            if len(value) > self.limits.string:
                return Unknown("string too long")
            return Const(value, origin=frame.origin(what, node))
        return Unknown(f"{type(value).__name__} value")

    # -- expressions ------------------------------------------------------------------------

    def _eval_Constant(self, node: ast.Constant, frame: Frame) -> Value:
        if node.value is Ellipsis:
            return Ref("builtins.Ellipsis")
        return self.bounded(node.value, node, frame)

    def _eval_Tuple(self, node: ast.Tuple, frame: Frame) -> Value:
        return self._sequence(node.elts, frame, is_list=False)

    def _eval_List(self, node: ast.List, frame: Frame) -> Value:
        return self._sequence(node.elts, frame, is_list=True)

    def _eval_Set(self, node: ast.Set, frame: Frame) -> Value:
        items = self._sequence(node.elts, frame, is_list=False)
        return SetV(items.items) if isinstance(items, Seq) else items

    def _sequence(self, elements: list[ast.expr], frame: Frame, is_list: bool) -> Value:
        items: list[Value] = []
        for element in elements:
            if isinstance(element, ast.Starred):
                spread = self.iterate(self.eval(element.value, frame), frame)
                if not isinstance(spread, Seq):
                    return Unknown("starred value of unknown length")
                items.extend(spread.items)
            else:
                items.append(self.eval(element, frame))
            if len(items) > self.limits.collection:
                return Unknown("collection too large")
        return Seq(tuple(items), is_list)

    def _eval_Dict(self, node: ast.Dict, frame: Frame) -> Value:
        keys: list[Value] = []
        values: list[Value] = []
        for key, value in zip(node.keys, node.values):
            if key is None:
                spread = self.eval(value, frame)
                if not isinstance(spread, DictV):
                    return Unknown("** of unknown mapping")
                keys.extend(spread.keys)
                values.extend(spread.values)
            else:
                keys.append(self.eval(key, frame))
                values.append(self.eval(value, frame))
        return DictV(tuple(keys), tuple(values))

    def _eval_Name(self, node: ast.Name, frame: Frame) -> Value:
        value = self.lookup(node.id, frame, node)
        if self.typing is not None and isinstance(value, ArrayV) and value.typed is not None:
            named(self, frame, node, value.typed)  # a hover on the name answers with its type
        return value

    def _eval_Attribute(self, node: ast.Attribute, frame: Frame) -> Value:
        if isinstance(node.value, ast.Name):
            assigned = self.assigned_attribute(node.value.id, node.attr, frame)
            if assigned is not None:
                return assigned
        base = self.eval(node.value, frame)
        return self.attribute(base, node.attr, node, frame)

    def assigned_attribute(self, name: str, attr: str, frame: Frame) -> Value | None:
        """`name.attr` as assigned earlier in the same function or module (`cls.config =
        Config.big()` in a test's `setUpClass`, then `Model(cls.config)`), whatever object
        `name` holds; None when no such assignment reaches here."""
        key = attribute_key(name, attr)
        scope = frame.scope
        if scope.kind == "class":
            return None
        if scope.module is not None and scope.kind == "module" and self.reads is not None:
            self.reads.names.add((scope.module.path, key))
        candidates = scope.lookup(key, frame.position)
        return self.bindings_value(candidates, scope, frame) if candidates else None

    def _eval_BinOp(self, node: ast.BinOp, frame: Frame) -> Value:
        left = self.eval(node.left, frame)
        right = self.eval(node.right, frame)
        return self.binop(type(node.op), left, right, node, frame)

    def _eval_UnaryOp(self, node: ast.UnaryOp, frame: Frame) -> Value:
        operand = self.eval(node.operand, frame)
        return self._map(operand, lambda v: self._unary(node, v, frame))

    def _unary(self, node: ast.UnaryOp, value: Value, frame: Frame) -> Value:
        if isinstance(value, ArrayV) and not isinstance(node.op, ast.Not):
            return value  # elementwise: the same shape, dtype and sharding
        if not isinstance(value, Const):
            return Unknown("operand unknown", symbol=_symbol(value, "-"))
        try:
            if isinstance(node.op, ast.USub):
                result: object = -value.value  # type: ignore[operator]
            elif isinstance(node.op, ast.UAdd):
                result = +value.value  # type: ignore[operator]
            elif isinstance(node.op, ast.Not):
                result = not value.value
            else:
                result = ~value.value  # type: ignore[operator]
        except Exception:
            return Unknown("invalid operand")
        return assuming(self.bounded(result, node, frame, "computed"), value)

    def _eval_BoolOp(self, node: ast.BoolOp, frame: Frame) -> Value:
        is_and = isinstance(node.op, ast.And)
        result: Value = Unknown("empty")
        for value_node in node.values:
            result = self.eval(value_node, frame)
            truth = truthiness(result)
            if truth is None:
                return Unknown("condition unknown")
            if truth is not is_and:
                return result
        return result

    def _eval_Compare(self, node: ast.Compare, frame: Frame) -> Value:
        left = self.eval(node.left, frame)
        if len(node.ops) == 1 and not isinstance(node.ops[0], (ast.In, ast.NotIn, ast.Is, ast.IsNot)):
            compared = self._array_comparison(node, left, frame)
            if compared is not None:
                return compared
        operands = [left]
        for op, comparator in zip(node.ops, node.comparators):
            right = self.eval(comparator, frame)
            operands.append(right)
            if isinstance(op, (ast.In, ast.NotIn)):
                if not isinstance(right, (Seq, SetV, DictV)) or not isinstance(left, Const):
                    return Unknown("membership unknown")
                members = right.keys if isinstance(right, DictV) else right.items
                if not all(isinstance(m, Const) for m in members):
                    return Unknown("membership unknown")
                found = any(left.value == m.value for m in members)  # type: ignore[attr-defined]
                outcome = found if isinstance(op, ast.In) else not found
            elif isinstance(left, Const) and isinstance(right, Const):
                try:
                    outcome = bool(_COMPARE[type(op)](left.value, right.value))
                except Exception:
                    return Unknown("comparison failed")
            elif isinstance(op, (ast.Is, ast.IsNot)) and _never_none(left, right):
                outcome = isinstance(op, ast.IsNot)  # `spec is not None` on a spec
            else:
                return Unknown("comparison unknown")
            if not outcome:
                return assuming(Const(False), *operands)
            left = right
        return assuming(Const(True), *operands)

    def _array_comparison(self, node: ast.Compare, left: Value, frame: Frame) -> Value | None:
        """`x > 0` on arrays: a boolean array of the broadcast shape (typed when `x`'s type is)."""
        right = self.eval(node.comparators[0], frame)
        if not isinstance(left, ArrayV) and not isinstance(right, ArrayV):
            return None
        shaped = array_operation(ast.Add, left, right)
        base = replace(shaped, dtype=_BOOL) if isinstance(shaped, ArrayV) else shaped
        return typed_binop(self, type(node.ops[0]), left, right, node, frame, base) or base

    def _eval_IfExp(self, node: ast.IfExp, frame: Frame) -> Value:
        truth = truthiness(self.eval(node.test, frame))
        if truth is True:
            return self.eval(node.body, frame)
        if truth is False:
            return self.eval(node.orelse, frame)
        return self.choice([self.eval(node.body, frame), self.eval(node.orelse, frame)])

    def _eval_Subscript(self, node: ast.Subscript, frame: Frame) -> Value:
        base = self.eval(node.value, frame)
        if isinstance(node.slice, ast.Slice):
            bounds = [
                None if part is None else as_int(self.eval(part, frame))
                for part in (node.slice.lower, node.slice.upper, node.slice.step)
            ]
            part = node.slice
            given = (part.lower, part.upper, part.step)
            known = all(b is not None or p is None for b, p in zip(bounds, given))
            window: slice | Value = slice(*bounds) if known else Unknown("slice bounds unknown")
            return self._map(
                base,
                lambda b: typed_subscript(self, b, window, node, frame, self._slice(b, part, bounds, frame)),
            )
        index = self.eval(node.slice, frame)
        return self._map(
            base,
            lambda b: typed_subscript(self, b, index, node, frame, self.subscript(b, index, node, frame)),
        )

    def _slice(self, base: Value, part: ast.Slice, bounds: list[int | None], frame: Frame) -> Value:
        if any(b is None and p is not None for b, p in zip(bounds, (part.lower, part.upper, part.step))):
            return Unknown("slice bounds unknown")
        if bounds[2] == 0:
            return Unknown("slice step zero")
        window = slice(*bounds)
        if isinstance(base, Seq):
            return Seq(base.items[window], base.is_list)
        if isinstance(base, Const) and isinstance(base.value, str | bytes):
            return Const(base.value[window])
        return self.library.subscript(self, base, window, frame) or Unknown("slice of unknown value")

    def subscript(self, base: Value, index: Value, node: ast.AST, frame: Frame) -> Value:
        if isinstance(base, DictV):
            key = index.value if isinstance(index, Const) else None
            found = base.get(key) if isinstance(index, Const) else None
            return found if found is not None else Unknown("key not found")
        position = as_int(index)
        if isinstance(base, Seq) and position is not None:
            if -len(base.items) <= position < len(base.items):
                return base.items[position]
            return Unknown("index out of range")
        if isinstance(base, Const) and isinstance(base.value, str) and position is not None:
            try:
                return Const(base.value[position])
            except IndexError:
                return Unknown("index out of range")
        library = self.library.subscript(self, base, index, frame)
        if library is not None:
            return library
        return Unknown("subscript of unknown value")

    def _eval_Slice(self, node: ast.Slice, frame: Frame) -> Value:
        """A slice inside a tuple index (`x[0:4, ::2]`; a lone slice is read by `_eval_Subscript`)."""
        lower, upper, step = (
            None if part is None else self.eval(part, frame) for part in (node.lower, node.upper, node.step)
        )
        return SliceV(lower, upper, step)

    def _eval_JoinedStr(self, node: ast.JoinedStr, frame: Frame) -> Value:
        parts: list[str] = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                parts.append(value.value)
                continue
            inner = self.eval(value.value, frame) if isinstance(value, ast.FormattedValue) else Unknown("")
            if not isinstance(inner, Const):
                return Unknown("formatted string with unknown parts")
            parts.append(str(inner.value))
        return self.bounded("".join(parts), node, frame, "computed")

    def _eval_Starred(self, node: ast.Starred, frame: Frame) -> Value:
        return self.eval(node.value, frame)

    def _eval_NamedExpr(self, node: ast.NamedExpr, frame: Frame) -> Value:
        return self.eval(node.value, frame)

    def _eval_Lambda(self, node: ast.Lambda, frame: Frame) -> Value:
        return Unknown("lambda")

    def _eval_ListComp(self, node: ast.ListComp, frame: Frame) -> Value:
        return self._comprehension(node.elt, node.generators, frame, is_list=True)

    def _eval_GeneratorExp(self, node: ast.GeneratorExp, frame: Frame) -> Value:
        return self._comprehension(node.elt, node.generators, frame, is_list=False)

    def _eval_SetComp(self, node: ast.SetComp, frame: Frame) -> Value:
        result = self._comprehension(node.elt, node.generators, frame, is_list=False)
        return SetV(result.items) if isinstance(result, Seq) else result

    def _eval_DictComp(self, node: ast.DictComp, frame: Frame) -> Value:
        """`{k: NamedSharding(mesh, v) for k, v in specs.items()}`: a dict, when it unrolls."""
        result = self._comprehension((node.key, node.value), node.generators, frame, is_list=False)
        if not isinstance(result, Seq):
            return result
        pairs = [item.items for item in result.items if isinstance(item, Seq)]
        return DictV(tuple(key for key, _ in pairs), tuple(value for _, value in pairs))

    def _comprehension(
        self,
        element: ast.expr | tuple[ast.expr, ast.expr],
        generators: list[ast.comprehension],
        frame: Frame,
        is_list: bool,
    ) -> Value:
        """Comprehensions of known, bounded length (`range(n)`, literal tuples) are unrolled; a
        dict comprehension's element is its key and value."""
        results: list[Value] = []

        def run(index: int, local: dict[str, Value]) -> bool:
            if index == len(generators):
                inner = replace(frame, locals=local)
                if isinstance(element, tuple):
                    results.append(Seq(tuple(self.eval(part, inner) for part in element)))
                else:
                    results.append(self.eval(element, inner))
                return len(results) <= self.limits.collection
            generator = generators[index]
            iterable = self.eval(generator.iter, replace(frame, locals=local))
            if not isinstance(iterable, Seq):
                return False
            for item in iterable.items:
                scoped = dict(local)
                if not bind_target(generator.target, item, scoped):
                    return False
                conditions = [truthiness(self.eval(c, replace(frame, locals=scoped))) for c in generator.ifs]
                if any(c is None for c in conditions):
                    return False
                if all(conditions) and not run(index + 1, scoped):
                    return False
            return True

        if not run(0, dict(frame.locals)):
            return Unknown("comprehension of unknown or unbounded length")
        return Seq(tuple(results), is_list)

    def _eval_Call(self, node: ast.Call, frame: Frame) -> Value:
        func = self.eval(node.func, frame)
        args: list[Value] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                spread = self.iterate(self.eval(arg.value, frame), frame)
                if not isinstance(spread, Seq):
                    return Unknown("*args of unknown length")
                args.extend(spread.items)
                if len(args) > self.limits.collection:
                    return Unknown("too many arguments")
            else:
                args.append(self.eval(arg, frame))
        kwargs: dict[str, Value] = {}
        for keyword in node.keywords:
            value = self.eval(keyword.value, frame)
            if keyword.arg is None:
                if not isinstance(value, DictV):
                    return Unknown("**kwargs of unknown contents")
                for k, v in zip(value.keys, value.values):
                    if isinstance(k, Const) and isinstance(k.value, str):
                        kwargs[k.value] = v
            else:
                kwargs[keyword.arg] = value
        return self._map(func, lambda f: self.call(f, args, kwargs, node, frame))

    # -- names ------------------------------------------------------------------------------

    def lookup(self, name: str, frame: Frame, node: ast.AST | None = None) -> Value:
        if name in frame.locals and not self._item_written(name, frame) and not self._rebound(name, frame):
            return frame.locals[name]
        scope: Scope | None = frame.scope
        position = frame.position
        first = True
        while scope is not None:
            if scope.module is not None and scope.kind == "module" and self.reads is not None:
                self.reads.names.add((scope.module.path, name))
            if first or scope.kind != "class":
                candidates = scope.lookup(name, position)
                if candidates:
                    value = self.bindings_value(candidates, scope, frame if first else None)
                    return value if first else _read_from_a_function(value, name, scope)
            first = False
            position = None
            scope = scope.parent
        if name in _BUILTIN_NAMES:
            return Ref(f"builtins.{name}")
        return Unknown(f"{name!r} is not defined here", symbol=name)

    def _rebound(self, name: str, frame: Frame) -> bool:
        """Whether the parameter `name` was assigned again before here (`k, s = k if ... else
        (k, None)`): the argument it was called with is then no longer its value."""
        if frame.position is None or frame.scope.function is None:
            return False
        if not any(b.kind == "param" for b in frame.scope.bindings.get(name, ())):
            return False
        return any(b.kind != "param" for b in frame.scope.lookup(name, frame.position))

    def _item_written(self, name: str, frame: Frame) -> bool:
        """Whether an item of the local `name` was written before here (`kwargs["x"] = v`): the
        local's value then comes from that write, which starts from the local itself."""
        if frame.position is None:
            return False
        return any(b.kind == "setitem" for b in frame.scope.lookup(name, frame.position))

    def bindings_value(self, candidates: tuple[Binding, ...], scope: Scope, frame: Frame | None) -> Value:
        reachable = [b for b in candidates if self._reachable(b, scope, frame)] or list(candidates)
        changed = next((b for b in reachable if b.in_loop), None)
        if changed is not None:
            # Not the value before the loop, nor after one iteration: the count is not known.
            return Unknown(f"{changed.name!r} is changed in a loop", symbol=changed.name)
        values = [self.binding_value(binding, scope, frame) for binding in reachable[-self.limits.choices :]]
        return values[0] if len(values) == 1 else self.choice(values)

    def _reachable(self, binding: Binding, scope: Scope, frame: Frame | None) -> bool:
        """False when an `if` test on the binding's path is decided against its branch. Memoised
        as `binding_value` is (every lookup of a name asks it of each of its bindings)."""
        if not binding.guards:
            return True
        locals_ = frame.locals if frame is not None and scope is frame.scope else {}
        key = (id(binding), id(locals_) if locals_ else 0)
        cached = self._reached.get(key)
        if cached is not None:
            if self.typing is not None and key in self._reached_events:
                self.typing.replay(self._reached_events[key])
            return cached
        mark = self.typing.mark() if self.typing is not None else 0
        reached = self._guards_hold(binding, scope, frame, locals_)
        self._reached[key] = reached
        self._memo_locals[key[1]] = locals_
        if self.typing is not None:
            events = self.typing.since(mark)
            if events:
                self._reached_events[key] = events
        return reached

    def _guards_hold(
        self, binding: Binding, scope: Scope, frame: Frame | None, locals_: Mapping[str, Value]
    ) -> bool:
        for statement, branch in binding.guards:
            module = self._module_of(scope, frame)
            test_frame = Frame(
                module,
                scope,
                binding.segment,
                scope.order_of.get(id(statement)),
                locals_,
                frame.call_depth if frame is not None else 0,
            )
            if truthiness(self.eval(statement.test, test_frame)) is (not branch):
                return False
        return True

    def binding_value(self, binding: Binding, scope: Scope, frame: Frame | None) -> Value:
        locals_ = frame.locals if frame is not None and scope is frame.scope else {}
        key = (id(binding), id(locals_) if locals_ else 0)
        cached = self._memo.get(key)
        if cached is not None:
            if self.typing is not None and key in self._memo_events:
                self.typing.replay(self._memo_events[key])
            return cached
        if key in self._active:
            return Unknown(f"{binding.name!r} is defined in terms of itself", symbol=binding.name)
        self._active.add(key)
        mark = self.typing.mark() if self.typing is not None else 0
        try:
            module = (
                frame.module if frame is not None and scope is frame.scope else self._module_of(scope, frame)
            )
            inner = Frame(
                module,
                scope,
                binding.segment,
                binding.order,
                locals_,
                frame.call_depth if frame is not None else 0,
            )
            with self._where_written(module, scope, binding.segment):
                value = self._binding(binding, scope, inner)
        finally:
            self._active.discard(key)
        self._memo[key] = value
        self._memo_locals[key[1]] = locals_
        if self.typing is not None:
            events = self.typing.since(mark)
            if events:
                self._memo_events[key] = events
        return value

    @contextlib.contextmanager
    def _where_written(self, module: ModuleInfo, scope: Scope, segment: Segment) -> Iterator[None]:
        """A top-level binding runs eagerly where it is written, under the mesh set above it: its
        value (memoised for every reader) must not take the mesh or tracing of the code that
        happens to read it first (an array placed under an Auto mesh, read below a later
        `jax.set_mesh` of an Explicit one)."""
        mesh_at = self.mesh_at
        if mesh_at is None or scope.kind != "module" or module is not self.analysed:
            yield
            return
        self.mesh_at = None  # finding that mesh evaluates bindings too (the `set_mesh` statements)
        try:
            mesh = mesh_at(segment)
        finally:
            self.mesh_at = mesh_at
        previous = self.context_mesh, self.tracing
        self.context_mesh, self.tracing = mesh, False
        try:
            yield
        finally:
            self.context_mesh, self.tracing = previous

    def _module_of(self, scope: Scope, frame: Frame | None) -> ModuleInfo:
        if scope.module is not None:
            return scope.module
        assert frame is not None
        return frame.module

    def _binding(self, binding: Binding, scope: Scope, frame: Frame) -> Value:
        kind = binding.kind
        if kind in ("assign", "with") and binding.value is not None:
            value = unpack(self.eval(binding.value, frame), binding.unpack)
            if isinstance(value, Const) and value.origin is not None and value.origin.line == binding.line:
                named = frame.origin(f"`{binding.name}`", binding.node)
                return replace(value, origin=replace(named, assumption=value.origin.assumption))
            return value
        if kind == "for" and binding.value is not None:
            iterable = self.eval(binding.value, frame)
            if isinstance(iterable, Seq) and iterable.items:
                return self.choice([unpack(item, binding.unpack) for item in iterable.items])
            return Unknown(f"loop variable {binding.name!r}", symbol=binding.name)
        if kind == "augassign" and isinstance(binding.node, ast.AugAssign):
            previous = self.lookup(binding.name, frame, binding.node)
            right = self.eval(binding.node.value, frame)
            return self.binop(type(binding.node.op), previous, right, binding.node, frame)
        if kind == "mutate" and isinstance(binding.value, ast.Call):
            previous = self.lookup(binding.name, frame, binding.node)
            args, kwargs = self.call_arguments(binding.value, frame)
            method = binding.value.func.attr if isinstance(binding.value.func, ast.Attribute) else ""
            return mutated(previous, method, args, kwargs, self.limits.collection) or Unknown(
                f"{binding.name!r} after .{method}()", symbol=binding.name
            )
        if kind == "setitem" and binding.target is not None and binding.value is not None:
            previous = self.lookup(binding.name, frame, binding.node)
            key = self.eval(binding.target.slice, frame)
            return _with_item(previous, key, unpack(self.eval(binding.value, frame), binding.unpack))
        if kind == "def" and isinstance(binding.node, ast.FunctionDef | ast.AsyncFunctionDef):
            return FunctionV(
                self.function_info(binding.node, frame.module, binding.segment, scope, scope.owner)
            )
        if kind == "class" and isinstance(binding.node, ast.ClassDef):
            return ClassV(self.class_info(binding.node, frame.module, binding.segment, scope))
        if kind in ("import", "importfrom"):
            return self._import(binding, frame)
        if kind == "param":
            if binding.name in frame.locals:
                return frame.locals[binding.name]
            return self.param_default(binding, frame)
        if kind == "annotation":
            return Unknown(f"{binding.name!r} has no value here", symbol=binding.name)
        return Unknown(f"{binding.name!r} ({kind})", symbol=binding.name)

    def param_default(self, binding: Binding, frame: Frame) -> Value:
        """A parameter nobody bound: its default, else a symbol named after it."""
        function = frame.scope.function
        if function is not None:
            default = function.default_of(binding.name)
            if default is not None:
                parent = Frame(frame.module, function.parent, function.segment, None, {}, frame.call_depth)
                value = self.eval(default, parent)
                if isinstance(value, Const):
                    text = f"default of parameter {binding.name} of {function.qualname}()"
                    return replace(value, origin=frame.origin(text, default))
                return value
        return self.library.parameter(frame.scope, binding.name) or Unknown(
            f"parameter {binding.name!r}", symbol=binding.name
        )

    def _import(self, binding: Binding, frame: Frame) -> Value:
        alias = binding.node
        assert isinstance(alias, ast.alias)
        statement = binding.statement
        if binding.kind == "import":
            dotted = alias.name if alias.asname else alias.name.split(".")[0]
            module = self.resolver.resolve(frame.module, dotted, 0)
            return ModuleV(module) if module is not None else Ref(self.library.canonical(dotted))
        level = statement.level if isinstance(statement, ast.ImportFrom) else 0
        base = statement.module if isinstance(statement, ast.ImportFrom) else None
        base_name = base or ""
        module = self.resolver.resolve(frame.module, base_name, level)
        if module is not None:
            submodule = (
                self.resolver.resolve(module, alias.name, 1) if module.path.endswith("__init__.py") else None
            )
            value = self.module_attribute(module, alias.name, frame)
            if isinstance(value, Unknown) and submodule is not None:
                return ModuleV(submodule)
            return value
        if level:
            return Unknown(f"relative import {'.' * level}{base_name} not found in the workspace")
        return Ref(self.library.canonical(f"{base_name}.{alias.name}"))

    def module_attribute(self, module: ModuleInfo, name: str, frame: Frame) -> Value:
        if self.reads is not None:
            self.reads.modules[module.path] = module
            self.reads.names.add((module.path, name))
        candidates = module.scope.lookup(name, None)
        if not candidates:
            return Unknown(f"{name!r} not found in {module.path}", symbol=name)
        top = Frame(module, module.scope, candidates[-1].segment, None, {}, frame.call_depth)
        return self.bindings_value(candidates, module.scope, top)

    # -- attributes -------------------------------------------------------------------------

    def attribute(self, base: Value, attr: str, node: ast.AST, frame: Frame) -> Value:
        return self._map(base, lambda b: self._attribute(b, attr, node, frame))

    def _attribute(self, base: Value, attr: str, node: ast.AST, frame: Frame) -> Value:
        if isinstance(base, Ref):
            special = self.library.attribute(self, base, attr, node, frame)
            return special if special is not None else Ref(self.library.canonical(f"{base.qualname}.{attr}"))
        if isinstance(base, ModuleV):
            value = self.module_attribute(base.module, attr, frame)
            if isinstance(value, Unknown):
                submodule = self.resolver.resolve(base.module, attr, 1)
                if submodule is not None:
                    return ModuleV(submodule)
            return value
        if isinstance(base, ClassV):
            return self.class_attribute(base.cls, attr, frame, bound=base)
        if isinstance(base, InstanceV):
            return self.instance_attribute(base, attr, frame)
        special = self.library.attribute(self, base, attr, node, frame)
        if special is not None:
            return special
        return Unknown(f"attribute {attr!r} of an unknown value", symbol=attr)

    def class_attribute(self, cls: ClassInfo, attr: str, frame: Frame, bound: Value | None) -> Value:
        for klass in self.mro(cls, frame):
            if attr in klass.methods:
                method = klass.methods[attr]
                if method.kind == "staticmethod":
                    return FunctionV(method)
                if method.kind == "classmethod":
                    return FunctionV(method, bound=ClassV(cls) if not isinstance(bound, InstanceV) else bound)
                return FunctionV(method, bound=bound if isinstance(bound, InstanceV) else None)
            candidates = klass.scope.lookup(attr, None)
            if candidates:
                top = Frame(klass.module, klass.scope, klass.segment, None, {}, frame.call_depth)
                value = self.bindings_value(candidates, klass.scope, top)
                if self.is_enum(klass, frame) and not isinstance(value, FunctionV):
                    return InstanceV(klass, (("value", value), ("name", Const(attr))))
                return value
        return Unknown(f"{cls.name}.{attr} not found", symbol=f"{cls.name}.{attr}")

    def instance_attribute(self, instance: InstanceV, attr: str, frame: Frame) -> Value:
        """`self.x = ...` in `__init__`/`__post_init__`/`setup` first (a plain class's constructor
        parameters are not its attributes; a dataclass's `__post_init__` may overwrite a field),
        then the fields the instance was built with, then class attributes."""
        for klass in self.mro(instance.cls, frame):
            assignments = klass.self_assignments.get(attr)
            if assignments:
                values = [
                    self._self_assignment(instance, method, stmt, frame) for method, stmt in assignments
                ]
                return self.choice(values)
        bound = instance.field_value(attr)
        if bound is not None:
            return bound
        value = self.class_attribute(instance.cls, attr, frame, bound=instance)
        if isinstance(value, FunctionV) and value.func.kind == "property":
            return self.call(value, [], {}, None, frame)
        if isinstance(value, Unknown):
            return self.library.attribute(self, instance, attr, instance.call or _EMPTY_CALL, frame) or value
        return value

    def _self_assignment(
        self, instance: InstanceV, method: FunctionInfo, stmt: ast.stmt, frame: Frame
    ) -> Value:
        if frame.call_depth >= self.limits.call_depth:
            return Unknown("calls nested too deeply")
        locals_ = self.bind_arguments(method, [], dict(instance.fields), instance, frame)
        inner = Frame(
            method.module,
            method.scope,
            method.segment,
            method.scope.order_of.get(id(stmt)),
            locals_,
            frame.call_depth + 1,
        )
        value_node = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        if value_node is None and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            value_node = stmt.value.args[2]
        if value_node is None:
            return Unknown("attribute without a value")
        return self.eval(value_node, inner)

    def mro(self, cls: ClassInfo, frame: Frame) -> list[ClassInfo]:
        """The class and its workspace base classes, depth first (enough for configs and modules)."""
        order: list[ClassInfo] = []
        stack = [cls]
        while stack and len(order) < 32:
            klass = stack.pop(0)
            if klass in order:
                continue
            order.append(klass)
            for base in klass.node.bases:
                base_frame = Frame(klass.module, klass.parent, klass.segment, None, {}, frame.call_depth)
                value = self.eval(base, base_frame)
                if isinstance(value, ClassV):
                    stack.append(value.cls)
        return order

    def base_qualnames(self, cls: ClassInfo, frame: Frame) -> set[str]:
        """Library classes a workspace class derives from (e.g. `flax.nnx.Module`, `enum.Enum`)."""
        found: set[str] = set()
        for klass in self.mro(cls, frame):
            for base in klass.node.bases:
                base_frame = Frame(klass.module, klass.parent, klass.segment, None, {}, frame.call_depth)
                value = self.eval(base, base_frame)
                if isinstance(value, Ref):
                    found.add(value.qualname)
        return found

    def is_enum(self, cls: ClassInfo, frame: Frame) -> bool:
        return any(q.startswith("enum.") for q in self.base_qualnames(cls, frame))

    # -- calls ------------------------------------------------------------------------------

    def call(
        self, func: Value, args: list[Value], kwargs: dict[str, Value], node: ast.Call | None, frame: Frame
    ) -> Value:
        call_node = node if node is not None else _EMPTY_CALL
        if isinstance(func, Ref):
            result = self.library.call(self, func.qualname, args, kwargs, call_node, frame)
            return result if result is not None else Unknown(f"result of {func.qualname}()")
        if isinstance(func, FunctionV):
            mapped = shard_mapped_function_call(self, func, args, kwargs, frame)
            if mapped is not None:
                return mapped
            result = self.call_function(func, args, kwargs, frame)
            return decorated_call(self, func, node, frame, args, kwargs, result)
        if isinstance(func, ClassV):
            return self.instantiate(func.cls, args, kwargs, node, frame)
        if isinstance(func, BoundMethod):
            result = self.library.method(self, func, args, kwargs, call_node, frame)
            return result if result is not None else Unknown(f"result of .{func.name}()")
        if isinstance(func, InstanceV):  # `model(x)`: the class's `__call__`
            method = next(
                (k.methods["__call__"] for k in self.mro(func.cls, frame) if "__call__" in k.methods), None
            )
            if method is not None:
                return self.call_function(FunctionV(method, bound=func), args, kwargs, frame)
        # A library value called like a function (`jnp.float32(1.0)` calls a dtype): its `__call__`.
        result = self.library.method(self, BoundMethod(func, "__call__"), args, kwargs, call_node, frame)
        return result if result is not None else Unknown("call of an unknown value")

    def call_function(
        self, func: FunctionV, args: list[Value], kwargs: dict[str, Value], frame: Frame
    ) -> Value:
        info = func.func
        if frame.call_depth >= self.limits.call_depth:
            return Unknown(f"calls nested too deeply in {info.qualname}()")
        if info.kind == "property":
            args = []
        locals_ = self.bind_arguments(info, args, kwargs, func.bound, frame)
        returns = info.returns
        if not returns:
            return Const(None)
        traced = traced_by_decorator(info.node)
        outside = self.tracing
        self.tracing = True if traced or outside else None if traced is None else outside
        try:
            return self._returned_once(
                info, returns, locals_, frame, (tuple(args), tuple(kwargs.items()), func.bound)
            )
        finally:
            self.tracing = outside

    def _returned_once(
        self,
        info: FunctionInfo,
        returns: list[ast.Return],
        locals_: Mapping[str, Value],
        frame: Frame,
        arguments: object,
    ) -> Value:
        """`_returned`, once per function, arguments and evaluation state (`analysis/reuse.py`):
        a helper called again with equal arguments (`cfg.mesh_shape()` in every statement)
        is not evaluated again."""
        from shardls.analysis.reuse import reuse_of

        key = (
            id(info.node),
            arguments,
            frame.call_depth,
            self.tracing,
            id(self.context_mesh),
            id(self.context),
            self.branching,
        )
        try:
            hash(key)
        except TypeError:
            return self._returned(info, returns, locals_, frame)
        alive = (info, self.context_mesh, self.context)
        return reuse_of(self).answer(key, alive, lambda: self._returned(info, returns, locals_, frame))

    def _returned(
        self, info: FunctionInfo, returns: list[ast.Return], locals_: Mapping[str, Value], frame: Frame
    ) -> Value:
        values: list[Value] = []
        guards = _return_guards(info.node)
        for ret in returns[: self.limits.choices]:
            if not self._branches_taken(info, guards.get(id(ret), ()), locals_, frame):
                continue  # under an `if` decided against it with these arguments
            if ret.value is None:
                values.append(Const(None))
                continue
            inner = Frame(
                info.module,
                info.scope,
                info.segment,
                info.scope.order_of.get(id(ret)),
                locals_,
                frame.call_depth + 1,
            )
            values.append(self.eval(ret.value, inner))
        if not values:
            return Unknown(f"no return of {info.qualname}() is reached")
        return values[0] if len(values) == 1 else self.choice(values)

    def _branches_taken(
        self,
        info: FunctionInfo,
        guards: tuple[tuple[ast.If, bool], ...],
        locals_: Mapping[str, Value],
        frame: Frame,
    ) -> bool:
        """False when one of the `if` tests around a `return` is decided against its branch."""
        for statement, branch in guards:
            order = info.scope.order_of.get(id(statement))
            test_frame = Frame(info.module, info.scope, info.segment, order, locals_, frame.call_depth + 1)
            if truthiness(self.eval(statement.test, test_frame)) is (not branch):
                return False
        return True

    def call_arguments(self, call: ast.Call, frame: Frame) -> tuple[list[Value], dict[str, Value]]:
        """A call's positional and keyword argument values, each its own question: `*args` of
        known length spread (else one unknown argument stands for them), `**kwargs` of known
        string keys spread (else left out)."""
        args: list[Value] = []
        for arg in call.args:
            if isinstance(arg, ast.Starred):
                spread = self.iterate(self.evaluate(arg.value, frame), frame)
                args.extend(spread.items if isinstance(spread, Seq) else (Unknown("*args"),))
            else:
                args.append(self.evaluate(arg, frame))
        kwargs: dict[str, Value] = {}
        for keyword in call.keywords:
            value = self.evaluate(keyword.value, frame)
            if keyword.arg is not None:
                kwargs[keyword.arg] = value
            elif isinstance(value, DictV):
                for key, item in zip(value.keys, value.values):
                    if isinstance(key, Const) and isinstance(key.value, str):
                        kwargs[key.value] = item
        return args, kwargs

    def bind_arguments(
        self,
        info: FunctionInfo,
        args: list[Value],
        kwargs: dict[str, Value],
        bound: Value | None,
        frame: Frame,
    ) -> dict[str, Value]:
        """Map call arguments to parameter names; what is missing falls back to defaults lazily."""
        node_args = info.node.args
        positional = [a.arg for a in list(node_args.posonlyargs) + list(node_args.args)]
        locals_: dict[str, Value] = {}
        queue = list(args)
        if bound is not None and positional and info.kind != "staticmethod":
            locals_[positional[0]] = bound
            positional = positional[1:]
        for name in positional:
            if queue:
                locals_[name] = queue.pop(0)
        if node_args.vararg is not None:
            locals_[node_args.vararg.arg] = Seq(tuple(queue))
        extra: dict[str, Value] = {}
        for name, value in kwargs.items():
            if name in positional or any(a.arg == name for a in node_args.kwonlyargs):
                locals_[name] = value
            else:
                extra[name] = value
        if node_args.kwarg is not None:
            locals_[node_args.kwarg.arg] = DictV(tuple(Const(k) for k in extra), tuple(extra.values()))
        return without_types(locals_) if under_auto_axes(info.node) else locals_

    def instantiate(
        self, cls: ClassInfo, args: list[Value], kwargs: dict[str, Value], node: ast.Call | None, frame: Frame
    ) -> Value:
        bases = self.base_qualnames(cls, frame)
        library = self.library.instantiate(self, cls, args, kwargs, node, frame)
        if library is not None:
            return library
        init = next((k.methods["__init__"] for k in self.mro(cls, frame) if "__init__" in k.methods), None)
        if init is not None and not self._is_generated_init(cls, frame, bases):
            # `self` takes no argument; the instance's fields are the other parameters.
            fields = self.bind_arguments(init, args, kwargs, Unknown("self"), frame)
            fields.pop(init.params[0].arg if init.params else "self", None)
            return InstanceV(cls, tuple(fields.items()), node)
        names = [n for klass in reversed(self.mro(cls, frame)) for n in klass.field_names]
        fields_map: dict[str, Value] = dict(zip(dict.fromkeys(names), args))
        fields_map.update(kwargs)
        return InstanceV(cls, tuple(fields_map.items()), node)

    def _is_generated_init(self, cls: ClassInfo, frame: Frame, bases: set[str]) -> bool:
        decorated = any(d.rsplit(".", 1)[-1] in ("dataclass", "define", "frozen") for d in cls.decorators)
        return decorated or any(b.endswith(("NamedTuple", "PyTreeNode", "struct.PyTreeNode")) for b in bases)

    # -- arithmetic -------------------------------------------------------------------------

    def binop(self, op: type[ast.operator], left: Value, right: Value, node: ast.AST, frame: Frame) -> Value:
        if isinstance(left, Choice) or isinstance(right, Choice):
            with self.branches():
                results = [
                    self.binop(op, a, b, node, frame)
                    for a, b in itertools.product(options(left), options(right))
                ]
            return self.choice(results)
        if isinstance(left, Seq) and isinstance(right, Seq) and op is ast.Add:
            if len(left.items) + len(right.items) > self.limits.collection:
                return Unknown("collection too large")
            return Seq(left.items + right.items, left.is_list)
        if op is ast.Mult and (isinstance(left, Seq) or isinstance(right, Seq)):
            seq, count = (left, as_int(right)) if isinstance(left, Seq) else (right, as_int(left))
            assert isinstance(seq, Seq)
            if count is None:
                return Unknown("repetition count unknown")
            if len(seq.items) * max(count, 0) > self.limits.collection:
                return Unknown("collection too large")
            return Seq(seq.items * count, seq.is_list)
        if isinstance(left, Const) and isinstance(right, Const):
            return assuming(self._arith(op, left.value, right.value, node, frame), left, right)
        array = array_operation(op, left, right)
        if array is not None:
            return typed_binop(self, op, left, right, node, frame, array) or array
        symbol = _binop_symbol(op, left, right)
        return Unknown("arithmetic on unknown values", symbol=symbol)

    def _arith(self, op: type[ast.operator], a: object, b: object, node: ast.AST, frame: Frame) -> Value:
        limit = self.limits.int_bits
        if isinstance(a, str | bytes) or isinstance(b, str | bytes):
            if op is ast.Mult:
                count = b if isinstance(b, int) else a
                text = a if isinstance(a, str | bytes) else b
                if not isinstance(count, int) or not isinstance(text, str | bytes):
                    return Unknown("invalid operands")
                if len(text) * max(count, 0) > self.limits.string:
                    return Unknown("string too long")
            elif op is ast.Mod:
                return Unknown("string formatting")
        elif isinstance(a, int) and isinstance(b, int):
            if op is ast.Pow:
                if b < 0 or (abs(a) > 1 and b * max(a.bit_length(), 1) > limit):
                    return Unknown("integer too large") if b >= 0 else self._float_pow(a, b, node, frame)
            elif op is ast.LShift and b > limit:
                return Unknown("integer too large")
        function = _BINOPS.get(op)
        if function is None:
            return Unknown("operator not modelled")
        try:
            result = function(a, b)
        except Exception:
            return Unknown("arithmetic error")
        return self.bounded(result, node, frame, "computed")

    def _float_pow(self, a: int, b: int, node: ast.AST, frame: Frame) -> Value:
        try:
            return self.bounded(float(a) ** b, node, frame, "computed")
        except Exception:
            return Unknown("arithmetic error")

    # -- helpers ----------------------------------------------------------------------------

    def iterate(self, value: Value, frame: Frame) -> Value:
        """A value as a sequence (`*spec`, `*shape`), through the library for its own types."""
        if isinstance(value, Seq):
            return value
        as_sequence = self.library.subscript(self, value, slice(None), frame)
        return as_sequence if as_sequence is not None else value

    def choice(self, values: list[Value]) -> Value:
        """The distinct options of `values`, the first `Limits.choices` of them (no later option
        can change those, so the search stops there: a loop over 10,000 items is not compared
        item by item with every other)."""
        flat: list[Value] = []
        for value in values:
            for option in options(value):
                if option not in flat:
                    flat.append(option)
                    if len(flat) == self.limits.choices:
                        return Choice(tuple(flat))
        if len(flat) == 1:
            return flat[0]
        return Choice(tuple(flat))

    def _map(self, value: Value, function: Callable[[Value], Value]) -> Value:
        if isinstance(value, Choice):
            with self.branches():
                return self.choice([function(option) for option in value.options])
        return function(value)

    @contextlib.contextmanager
    def branches(self) -> Iterator[None]:
        """Evaluating each option of a value in turn (see `branching`)."""
        self.branching += 1
        try:
            yield
        finally:
            self.branching -= 1


def _read_from_a_function(value: Value, name: str, scope: Scope) -> Value:
    """A function reads a module's global when it is called, not where it is defined: when the
    module binds a mesh name more than once (a tutorial's `mesh = ...` per section), the last
    binding is only one of the meshes the function may meet."""
    if not isinstance(value, MeshV) or scope.kind != "module" or len(scope.bindings.get(name, ())) < 2:
        return value
    note = f"`{name}` as last bound in the module; it is bound again, and the function may run before"
    return replace(value, assumptions=(*value.assumptions, note))


@functools.lru_cache(maxsize=4096)
def _expression_text(node: ast.AST) -> str:
    """How provenance names a computed value (cached per node: a loop or a comprehension
    computes the same expression thousands of times, and `ast.unparse` is costly)."""
    try:
        text = ast.unparse(node)
    except Exception:
        return "computed"
    return f"`{text}`" if len(text) <= 48 else "computed"


def _char_column(lines: tuple[str, ...], line: int, byte_column: int) -> int:
    if not 0 <= line < len(lines):
        return byte_column
    text = lines[line]
    if text.isascii():
        return byte_column
    return len(text.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))


_DISPATCH: dict[type[ast.AST], Callable[[Evaluator, Any, Frame], Value]] = {
    getattr(ast, name.removeprefix("_eval_")): method
    for name, method in vars(Evaluator).items()
    if name.startswith("_eval_") and hasattr(ast, name.removeprefix("_eval_"))
}
"""Evaluation method per AST node type (a dict lookup instead of building a name per node)."""


def mutated(
    before: Value, method: str, args: list[Value], kwargs: dict[str, Value], limit: int
) -> Value | None:
    """A list, dict or set after one call of a mutating method, when it is known; None when not
    (an unknown object, an unknown argument count, a method whose result depends on the data)."""
    if kwargs or not isinstance(before, (Seq, DictV, SetV)):
        return None
    if isinstance(before, Seq) and before.is_list:
        items = before.items
        if method == "append" and len(args) == 1:
            items = items + (args[0],)
        elif method == "extend" and len(args) == 1 and isinstance(args[0], Seq):
            items = items + args[0].items
        elif method == "insert" and len(args) == 2 and as_int(args[0]) is not None:
            at = as_int(args[0])
            assert at is not None
            items = items[:at] + (args[1],) + items[at:]
        elif method == "clear" and not args:
            items = ()
        else:
            return None
        return Seq(items, True) if len(items) <= limit else None
    if isinstance(before, DictV) and method == "update" and len(args) == 1 and isinstance(args[0], DictV):
        merged = _merged_dicts(before, args[0])
        return merged if len(merged.keys) <= limit else None
    if isinstance(before, SetV) and method == "add" and len(args) == 1:
        return SetV(before.items + (args[0],)) if len(before.items) < limit else None
    return None


def _merged_dicts(first: DictV, second: DictV) -> DictV:
    entries = dict(zip(first.keys, first.values))
    entries.update(zip(second.keys, second.values))
    return DictV(tuple(entries), tuple(entries.values()))


def assuming(result: Value, *operands: Value) -> Value:
    """`result` computed from `operands`, keeping the first assumption behind them (a size derived
    from the default device count is as assumed as the count itself)."""
    assumption = assumption_of(*operands)
    if assumption is None or not isinstance(result, Const):
        return result
    origin = result.origin or Origin("computed")
    return replace(result, origin=replace(origin, assumption=assumption))


_NEVER_NONE = (SpecV, ShardingV, ArrayV, MeshV, Seq, DictV, SetV)
"""Values that are known objects, so `value is None` is decided (False)."""


def _never_none(left: Value, right: Value) -> bool:
    """`x is None` / `x is not None` where one side is None and the other a known object."""
    return any(
        isinstance(a, Const) and a.value is None and isinstance(b, _NEVER_NONE)
        for a, b in ((left, right), (right, left))
    )


@functools.lru_cache(maxsize=4096)
def _return_guards(
    node: ast.FunctionDef | ast.AsyncFunctionDef,
) -> dict[int, tuple[tuple[ast.If, bool], ...]]:
    """For each `return` of a function (by id), the `if` statements it is under and whether in
    their body (True) or `else` (False): a call whose arguments decide a test does not return
    from the other branch (`if decode: return ...`)."""
    found: dict[int, tuple[tuple[ast.If, bool], ...]] = {}
    stack: list[tuple[ast.AST, tuple[tuple[ast.If, bool], ...]]] = [(s, ()) for s in node.body]
    while stack:
        current, guards = stack.pop()
        if isinstance(current, ast.Return):
            found[id(current)] = guards
        elif isinstance(current, ast.If):
            stack.extend((s, (*guards, (current, True))) for s in current.body)
            stack.extend((s, (*guards, (current, False))) for s in current.orelse)
        elif not isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend((child, guards) for child in ast.iter_child_nodes(current))
    return found


def truthiness(value: Value) -> bool | None:
    if isinstance(value, Const):
        return bool(value.value)
    if isinstance(value, Seq | DictV | SetV):
        return bool(value.items if not isinstance(value, DictV) else value.keys)
    return None


def unpack(value: Value, path: tuple[int | str, ...]) -> Value:
    for step in path:
        if not isinstance(value, Seq):
            return Unknown("unpacking an unknown value")
        if isinstance(step, int):
            if step >= len(value.items):
                return Unknown("unpacking: too few values")
            value = value.items[step]
        else:
            value = Seq(value.items[int(step.removeprefix("star")) :])
    return value


def bind_target(target: ast.expr, value: Value, local: dict[str, Value]) -> bool:
    """Bind a comprehension/loop target; False when the value cannot be unpacked."""
    if isinstance(target, ast.Name):
        local[target.id] = value
        return True
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, Seq):
        if len(target.elts) != len(value.items):
            return False
        return all(bind_target(t, v, local) for t, v in zip(target.elts, value.items))
    return False


def _symbol(value: Value, suffix: str) -> str | None:
    if isinstance(value, Unknown) and value.symbol:
        return value.symbol
    return None


def _binop_symbol(op: type[ast.operator], left: Value, right: Value) -> str | None:
    symbols = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Mod: "%", ast.Div: "/"}
    sign = symbols.get(op)
    if sign is None:
        return None

    def text(value: Value) -> str | None:
        if isinstance(value, Const) and isinstance(value.value, int):
            return str(value.value)
        if isinstance(value, Unknown) and value.symbol:
            return value.symbol if value.symbol.isidentifier() else f"({value.symbol})"
        return None

    a, b = text(left), text(right)
    return f"{a}{sign}{b}" if a is not None and b is not None else None


def _with_item(container: Value, key: Value, item: Value) -> Value:
    """`container[key] = item` on a copy: a dict with a known key, or a list with a known index."""
    if isinstance(container, DictV) and isinstance(key, Const):
        keys, values = list(container.keys), list(container.values)
        found = next((i for i, k in enumerate(keys) if isinstance(k, Const) and k.value == key.value), None)
        if found is None:
            keys.append(key)
            values.append(item)
        else:
            values[found] = item
        return DictV(tuple(keys), tuple(values))
    index = as_int(key)
    if (
        isinstance(container, Seq)
        and container.is_list
        and index is not None
        and -len(container.items) <= index < len(container.items)
    ):
        items = list(container.items)
        items[index] = item
        return Seq(tuple(items), True)
    return Unknown("an item written to a value of unknown contents")


__all__ = ["BudgetExceeded", "Evaluator", "Frame", "Limits", "dotted_name"]
