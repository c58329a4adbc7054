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
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from shardls.analysis.evaluator import Evaluator, Frame, bind_target, truthiness
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.nnx import SplitRngsV, StackLevel, StackV, VmapV, stacked_context
from shardls.analysis.recognizers.nnx import LAYER_NAMES, Annotation, LayerParam, layer_params, variable_param
from shardls.analysis.scopes import ClassInfo, FunctionInfo
from shardls.analysis.values import (
    ClassV,
    FunctionV,
    InstanceV,
    Ref,
    Seq,
    Unknown,
    Value,
    as_str,
    options,
)
from shardls.core import DType
from shardls.memory.model import ParamPath

MODULE_BASE = "flax.nnx.Module"
MAX_DEPTH = 10
"""Submodules nested deeper than this are not followed (and a note says so)."""
MAX_STEPS = 20_000
"""Layer calls, module constructions and loop iterations resolved per model (identical layers
resolve once: the 70B example takes 13)."""
EXHAUSTED = "the evaluation budget for this model is used up: what it did not reach is not counted"
MAX_UNROLLED = 1024
"""Items of a comprehension, or iterations of a `for` loop, resolved one by one when their sizes
depend on the loop."""
MAX_ITEMS = 100_000
"""Copies of one item a loop may make in a list (nested loops multiply); beyond, one is counted."""
_LISTS = frozenset(["flax.nnx.List", "builtins.list", "builtins.tuple"])
_WRAPPERS = frozenset(["flax.nnx.List", "flax.nnx.data"])
"""What keeps a list of modules an attribute Flax 0.12 accepts (a plain list is rejected)."""
_SEQUENTIAL = "flax.nnx.Sequential"
_TRANSFORMS = frozenset(["flax.nnx.vmap", "flax.nnx.scan"])
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


# -- lists being filled ------------------------------------------------------------------------


Label = int | None
"""A list index; None when it is not known (an earlier part of the list has an unknown length)."""


@dataclass
class _Item:
    """List items that hold the same modules: their indices, and the parameters of one of them
    with paths relative to the item (`up.kernel`)."""

    labels: tuple[Label, ...]
    params: list[RawParam]

    def rendered(self) -> list[RawParam]:
        return [p.under("", [_label_text(label) for label in self.labels]) for p in self.params]


@dataclass
class _Container:
    """A list of modules as `__init__` builds it (`nnx.List()`, then `.append`, `.extend`, `+=`):
    kept as items so that a loop can repeat the ones its body added."""

    items: list[_Item] = field(default_factory=list)
    length: int | None = 0
    plain: bool = False
    """A Python list or tuple, not an `nnx.List`: Flax 0.12 rejects one holding modules as an
    attribute of a (pytree) module."""

    @classmethod
    def of(cls, params: list[RawParam], length: int | None, plain: bool) -> _Container:
        """A list expression's parameters, whose paths start with the item index (`[3].up.kernel`)."""
        return cls(_as_items(params), length if length is not None else _inferred_length(params), plain)

    def params(self) -> list[RawParam]:
        return [p for item in self.items for p in item.rendered()]

    def append(self, params: list[RawParam]) -> None:
        self.items.append(_Item((self.length,), params))
        self.length = None if self.length is None else self.length + 1

    def extend(self, params: list[RawParam], count: int | None) -> None:
        base = self.length
        for item in _as_items(params):
            labels = tuple(None if base is None or label is None else base + label for label in item.labels)
            self.items.append(_Item(labels, item.params))
        if count is None:
            count = _inferred_length(params)
        self.length = None if base is None or count is None else base + count

    def mark(self) -> tuple[int, int | None]:
        return len(self.items), self.length

    def repeat(self, mark: tuple[int, int | None], times: int | None) -> bool:
        """The items added since `mark` came from one run of a loop body that runs `times` times
        (None: unknown, counted once): iteration i puts them `i * step` further on. False when
        that would make more than MAX_ITEMS copies of an item (then one is counted)."""
        count, length = mark
        added, self.items = self.items[count:], self.items[:count]
        step = None if self.length is None or length is None else self.length - length
        if times == 0:
            self.length = length
            return True
        bounded = times is None or all(len(item.labels) * times <= MAX_ITEMS for item in added)
        times = times if bounded else None
        for item in added:
            self.items.append(_Item(_repeated_labels(item.labels, step, times), item.params))
        if times is None or step is None or length is None:
            self.length = None
        else:
            self.length = length + times * step
        return bounded


def _repeated_labels(labels: tuple[Label, ...], step: int | None, times: int | None) -> tuple[Label, ...]:
    if times is None:
        return tuple(None for _ in labels)
    if step is None or None in labels:
        return tuple(None for _ in range(times) for _ in labels)
    return tuple(sorted(label + i * step for i in range(times) for label in labels if label is not None))


def _label_text(label: Label) -> str:
    return "[*]" if label is None else f"[{label}]"


def _label_value(text: str) -> Label:
    inside = text[1:-1]
    return int(inside) if inside.isdigit() else None


def _is_label(piece: tuple[str, ...]) -> bool:
    return all(text.startswith("[") for text in piece)


def _as_items(params: list[RawParam]) -> list[_Item]:
    """Parameters whose paths start with their item index, grouped per item (`[0..79]` is one
    group of 80 items)."""
    groups: dict[tuple[str, ...], list[RawParam]] = {}
    for param in params:
        pieces = param.where.pieces
        key = pieces[0] if pieces and _is_label(pieces[0]) else ()
        rest = ParamPath(pieces[1:]) if key else param.where
        groups.setdefault(key, []).append(replace(param, where=rest))
    return [_Item(tuple(_label_value(text) for text in key), group) for key, group in groups.items()]


def _inferred_length(params: list[RawParam]) -> int | None:
    """How many items a list has when only its parameters are known (`[0]`..`[n-1]` all used)."""
    labels = {label for item in _as_items(params) for label in item.labels or (None,)}
    if not labels or None in labels:
        return None
    return len(labels) if labels == set(range(len(labels))) else None


def _shifted(params: list[RawParam], offset: int | None) -> list[RawParam]:
    """A spread list's items (`[*blocks, head]`) placed from `offset` on."""
    shifted = _Container(length=offset)
    shifted.extend(params, None)
    return shifted.params()


def _item_params(params: list[RawParam], index: int) -> list[RawParam]:
    """What item `index` of a tuple holds (`_, self.blocks = scanned(rngs)`)."""
    label = (f"[{index}]",)
    return [replace(p, where=ParamPath(p.where.pieces[1:])) for p in params if p.where.pieces[:1] == (label,)]


# -- the resolver ------------------------------------------------------------------------------


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
            body = _Body(self, init, self_name, stack, depth, self._is_pytree(cls, frame))
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


class _Body:
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
        self.lists: dict[str, _Container] = {}
        self.attrs: dict[str, list[RawParam] | _Container] = {}
        self.loops = 0
        """How many loops the current statement is in: there, locals are tracked in the frame."""
        self.writes = 0
        """Attribute stores and list changes with parameters so far (did a branch build anything?)."""
        self._sizes: dict[int, int] = {}
        self.inherited: list[RawParam] = []
        """What `super().__init__(...)` of a Flax layer base created."""

    def params(self, body: list[ast.stmt], frame: Frame) -> list[RawParam]:
        """Run `body` and list what each attribute holds, in the order they were first set."""
        self.run(body, frame)
        found: list[RawParam] = list(self.inherited)
        for name, held in self.attrs.items():
            params = held.params() if isinstance(held, _Container) else held
            if isinstance(held, _Container) and held.plain and params and self.pytree:
                self.resolver.note(
                    f"`{self.self_name}.{name}` is a plain Python list of modules: Flax 0.12 rejects it "
                    "(ValueError: wrap it in nnx.List(...)); its parameters are counted as an nnx.List's"
                )
            found += [p.under(name) for p in params]
        return found

    # -- statements ----------------------------------------------------------------------------

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
            return self._loop(stmt, frame, here)
        return frame

    def _assignment(self, targets: list[ast.expr], value: ast.expr, frame: Frame) -> None:
        held = self._held(value, frame)
        if held is not None:
            for target in targets:
                self._bind(target, held)

    def _held(self, node: ast.expr, frame: Frame) -> list[RawParam] | _Container | None:
        """A list expression is a list that later statements may fill (a local name holds the same
        list, as in Python); anything else holds the parameters of the modules it builds."""
        if isinstance(node, ast.Name) and node.id in self.lists:
            return self.lists[node.id]
        if self._is_list(node, frame):
            params = self.expression(node, frame) or []
            return _Container.of(params, self._length(node, frame), not self._is_wrapped(node, frame))
        return self.expression(node, frame)

    def _bind(self, target: ast.expr, held: list[RawParam] | _Container) -> None:
        attribute = self._attribute(target)
        if attribute is not None:
            self.attrs[attribute] = held
            self.writes += bool(_params_of(held))
        elif isinstance(target, ast.Name):
            self.lists.pop(target.id, None)
            self.local_modules.pop(target.id, None)
            if isinstance(held, _Container):
                self.lists[target.id] = held
            else:
                self.local_modules[target.id] = held
        elif isinstance(target, (ast.Tuple, ast.List)):
            params = held.params() if isinstance(held, _Container) else held
            for index, element in enumerate(target.elts):
                if not isinstance(element, ast.Starred):
                    self._bind(element, _item_params(params, index))

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
        self.attrs = _joined(before, after_body, self.attrs)
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
            self.inherited += self._layer(layer, call, frame, layer_params)

    def _mutation(self, call: ast.Call, frame: Frame) -> None:
        """`x.append(m)`, `x.extend(ms)` on a list of this `__init__`, and `setattr(self, name, m)`."""
        func = call.func
        if isinstance(func, ast.Name) and func.id == "setattr":
            self._setattr(call, frame)
            return
        if not (isinstance(func, ast.Attribute) and func.attr in ("append", "extend") and call.args):
            return
        params = self.expression(call.args[0], frame)
        container = self._container(func.value, params is not None)
        if container is None:
            return
        if func.attr == "append":
            container.append(params or [])
        else:
            container.extend(params or [], self._length(call.args[0], frame))
        self.writes += bool(params)

    def _augmented(self, stmt: ast.AugAssign, frame: Frame, here: Frame) -> Frame:
        """`x += [m, ...]` extends a list; any other `+=` on a name is tracked like an assignment."""
        if isinstance(stmt.op, ast.Add) and self._is_list(stmt.value, here):
            params = self.expression(stmt.value, here)
            container = self._container(stmt.target, params is not None)
            if container is not None:
                container.extend(params or [], self._length(stmt.value, here))
                self.writes += bool(params)
                return frame
        if not isinstance(stmt.target, ast.Name) or not self._tracks({stmt.target.id}, frame):
            return frame
        name = stmt.target.id
        previous = self.evaluator.lookup(name, here)
        value = self.evaluator.binop(
            type(stmt.op), previous, self.evaluator.evaluate(stmt.value, here), stmt, here
        )
        return self._with_locals(frame, {name: value})

    def _container(self, node: ast.expr, create: bool) -> _Container | None:
        """The list `node` names (`self.layers`, `layers`); one of unknown length is made for an
        attribute or name this `__init__` did not set, when something is added to it."""
        attribute = self._attribute(node)
        if attribute is not None:
            held = self.attrs.get(attribute)
            if isinstance(held, _Container):
                return held
            if held is None and not create:
                return None
            container = self.attrs[attribute] = _Container.of(held or [], None, False)
            return container
        if isinstance(node, ast.Name):
            if node.id in self.lists:
                return self.lists[node.id]
            if create:
                known = self.local_modules.pop(node.id, [])
                container = self.lists[node.id] = _Container.of(known, None, True)
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
        self.writes += bool(_params_of(held))

    def _is_list(self, node: ast.expr, frame: Frame) -> bool:
        if isinstance(node, (ast.List, ast.Tuple, ast.ListComp)):
            return True
        if isinstance(node, ast.Name):
            return node.id in self.lists
        if isinstance(node, ast.Call):
            name = self._library_name(node.func, frame)
            if name in _LISTS:
                return True
            return name == "flax.nnx.data" and bool(node.args) and self._is_list(node.args[0], frame)
        return False

    def _is_wrapped(self, node: ast.expr, frame: Frame) -> bool:
        return isinstance(node, ast.Call) and self._library_name(node.func, frame) in _WRAPPERS

    def _library_name(self, node: ast.expr, frame: Frame) -> str | None:
        value = self.evaluator.evaluate(node, frame)
        return value.qualname if isinstance(value, Ref) else None

    def _length(self, node: ast.expr, frame: Frame) -> int | None:
        """How many items a list expression has, when the analysis can tell."""
        if isinstance(node, (ast.List, ast.Tuple)):
            total = 0
            for element in node.elts:
                count = self._length(element.value, frame) if isinstance(element, ast.Starred) else 1
                if count is None:
                    return None
                total += count
            return total
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self._sizes.get(id(node))
        if isinstance(node, ast.Name):
            container = self.lists.get(node.id)
            return container.length if container is not None else None
        if isinstance(node, ast.Call) and self._is_list(node, frame):
            return self._length(node.args[0], frame) if node.args else 0
        return None

    # -- loops ---------------------------------------------------------------------------------

    def _loop(self, stmt: ast.For, frame: Frame, here: Frame) -> Frame:
        """A body that does not depend on the iteration runs once and what it adds to lists is
        repeated (like a comprehension's item); otherwise each iteration runs with its loop
        variables bound, up to MAX_UNROLLED. An iterable the analysis cannot list counts its body
        once (with a note)."""
        names = _stored(stmt.target)
        reads = {name for s in stmt.body for name in _reads(s)}
        carried = (_read_first(stmt.body) & _written(stmt.body)) - set(self.lists)
        if not (reads & names) and not carried:
            return self._repeated(stmt, frame, here, self._iterations(stmt.iter, here))
        items = self.evaluator.iterate(self.evaluator.evaluate(stmt.iter, here), here)
        if not isinstance(items, Seq):
            return self._repeated(stmt, frame, here, None)
        if len(items.items) > MAX_UNROLLED:
            return self._repeated(stmt, frame, here, None, f"more than {MAX_UNROLLED} iterations differ")
        return self._unrolled(stmt, frame, items.items)

    def _iterations(self, node: ast.expr, frame: Frame) -> int | None:
        """How many times a loop runs, when the evaluator can list its iterable (which it does up
        to its collection limit, so that the copies stay bounded too)."""
        items = self.evaluator.iterate(self.evaluator.evaluate(node, frame), frame)
        return len(items.items) if isinstance(items, Seq) else None

    def _repeated(
        self,
        stmt: ast.For,
        frame: Frame,
        here: Frame,
        times: int | None,
        why: str = "the length is not known",
    ) -> Frame:
        """Run the body once and repeat what it added to each list `times` times."""
        if not self.resolver.spend():
            return frame
        marks = [(container, container.mark()) for container in self._containers()]
        before, writes = dict(self.attrs), self.writes
        names = {name: Unknown("loop variable", symbol=name) for name in _stored(stmt.target)}
        after = self._in_loop(stmt.body, self._with_locals(frame, names))
        if not all([container.repeat(mark, times) for container, mark in marks]):
            why = f"it would make more than {MAX_ITEMS} copies of an item"
            times = None
        if times == 0:
            self.attrs = before
            return frame
        if times is None and self.writes != writes:
            self.resolver.note(
                f"`for {ast.unparse(stmt.target)} in {ast.unparse(stmt.iter)[:60]}` at line "
                f"{here.line_of(stmt) + 1}: {why}, so its body is counted once"
            )
        return after

    def _unrolled(self, stmt: ast.For, frame: Frame, items: tuple[Value, ...]) -> Frame:
        """Each iteration with its loop variables bound; locals the body sets carry over."""
        current = frame
        for item in items:
            if not self.resolver.spend():
                break
            bound: dict[str, Value] = {}
            if not bind_target(stmt.target, item, bound):
                bound = {name: Unknown("loop variable", symbol=name) for name in _stored(stmt.target)}
            current = self._in_loop(stmt.body, self._with_locals(current, bound))
        return current

    def _in_loop(self, body: list[ast.stmt], frame: Frame) -> Frame:
        self.loops += 1
        try:
            return self.run(body, frame)
        finally:
            self.loops -= 1

    def _containers(self) -> list[_Container]:
        held = [*self.lists.values(), *(h for h in self.attrs.values() if isinstance(h, _Container))]
        return list({id(c): c for c in held}.values())

    def _tracked(self, targets: list[ast.expr], value: ast.expr, frame: Frame, here: Frame) -> Frame:
        """In a loop, a local's new value goes into the frame, so that the rest of the body and the
        next iteration read it (the scope's bindings know nothing of iterations)."""
        names = {name for target in targets for name in _stored(target)}
        if not self._tracks(names, frame):
            return frame
        evaluated = self.evaluator.evaluate(value, here)
        bound: dict[str, Value] = {}
        for target in targets:
            if isinstance(target, (ast.Name, ast.Tuple, ast.List)) and not bind_target(
                target, evaluated, bound
            ):
                bound.update({name: Unknown("unpacked", symbol=name) for name in _stored(target)})
        return self._with_locals(frame, bound)

    def _tracks(self, names: set[str], frame: Frame) -> bool:
        """Assignments go into the frame in a loop, and after one for the names the frame already
        holds (a loop's last values, or parameters), so that no stale value hides a new one."""
        return bool(names) and (self.loops > 0 or not names.isdisjoint(frame.locals))

    def _with_locals(self, frame: Frame, names: Mapping[str, Value]) -> Frame:
        if not names:
            return frame
        return replace(frame, locals=self.resolver.keep({**frame.locals, **names}))

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
            if node.id in self.lists:
                return self.lists[node.id].params()
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
        index: int | None = 0
        any_module = False
        for element in elements:
            params = self.expression(element, frame)
            starred = isinstance(element, ast.Starred)
            count = self._length(element.value, frame) if isinstance(element, ast.Starred) else 1
            if params is not None:
                any_module = True
                found += _shifted(params, index) if starred else [p.under(_label_text(index)) for p in params]
            if count is None and params:
                count = _inferred_length(params)
            index = None if index is None or count is None else index + count
        return found if any_module else None

    def _call(self, node: ast.Call, frame: Frame) -> list[RawParam] | None:
        transformed = self._transformed(node, frame)
        if transformed is not None:
            return transformed
        func = self.evaluator.evaluate(node.func, frame)
        for option in options(func):
            if isinstance(option, Ref) and option.qualname in LAYER_NAMES:
                return self._layer(option.qualname, node, frame, layer_params)
            if isinstance(option, Ref) and option.qualname in _VARIABLES:
                return self._layer(option.qualname, node, frame, lambda call: [variable_param(call)])
            if isinstance(option, Ref) and option.qualname in (*_LISTS, *_WRAPPERS):
                return self.expression(node.args[0], frame) if node.args else None
            if isinstance(option, Ref) and option.qualname == _SEQUENTIAL:
                items = self._items(node.args, frame)
                return None if items is None else [p.under("layers") for p in items]
            if isinstance(option, ClassV) and self.resolver.is_module(option.cls, frame):
                layer = self.resolver.inherited_layer(option.cls, frame)
                if layer is not None and self.resolver.init_of(option.cls, frame) is None:
                    return self._layer(layer, node, frame, layer_params)
                args, kwargs = self.evaluator.call_arguments(node, frame)
                return self.resolver.resolve_class(
                    option.cls, args, kwargs, frame, self.stack, self.depth + 1
                )
            if isinstance(option, FunctionV):
                return self._function(option.func, node, frame)
        return None

    def _transformed(self, node: ast.Call, frame: Frame) -> list[RawParam] | None:
        """`nnx.vmap(f, ...)(rngs)`, `nnx.scan(f, ...)(rngs)`, `nnx.split_rngs(splits=n)(nnx.vmap(f,
        ...))(rngs)`: `f` called with these arguments, its layers stacked by each transform."""
        wrappers: list[Value] = []
        inner: ast.expr = node.func
        while isinstance(inner, ast.Call) and inner.args:
            head = self.evaluator.evaluate(inner.func, frame)
            if isinstance(head, (VmapV, SplitRngsV)):
                wrappers.append(head)  # a transform with its options, applied to a function
            elif isinstance(head, Ref) and head.qualname in _TRANSFORMS:
                wrappers.append(self.evaluator.evaluate(inner, frame))
            else:
                break
            inner = inner.args[0]
        if not wrappers:
            return None
        if isinstance(inner, ast.Lambda):
            info: FunctionInfo | None = self.resolver.lambda_info(inner, frame)
        else:
            function = self.evaluator.evaluate(inner, frame)
            info = next((o.func for o in options(function) if isinstance(o, FunctionV)), None)
        return self._function(info, node, frame, tuple(wrappers)) if info is not None else None

    def _layer(
        self, qualname: str, node: ast.Call, frame: Frame, read: Callable[[CallArgs], list[LayerParam]]
    ) -> list[RawParam]:
        if not self.resolver.spend():
            return []
        args, kwargs = self.evaluator.call_arguments(node, frame)
        call = CallArgs(self.evaluator, self.resolver.library, qualname, args, kwargs, node, frame)
        levels = self.stack.levels if self.stack is not None else ()
        line = frame.line_of(node)
        return [
            RawParam(ParamPath().under(p.name), p.shape, p.dtype, p.annotation, levels, line)
            for p in read(call)
        ]

    def _function(
        self, info: FunctionInfo, node: ast.Call, frame: Frame, wrappers: tuple[Value, ...] = ()
    ) -> list[RawParam] | None:
        """A factory (`create_blocks(rngs)`): what its return statement builds (after the
        statements before it, which may fill a list), stacked once per `nnx.vmap`/`nnx.scan`
        around it. A function defined in this `__init__` sees its locals."""
        returns = [r for r in info.returns if r.value is not None]
        if not returns or frame.call_depth >= self.evaluator.limits.call_depth:
            return None
        args, kwargs = self.evaluator.call_arguments(node, frame)
        bound = self.evaluator.bind_arguments(info, args, kwargs, None, frame)
        nested = info.parent is self.init.scope
        defined = frame if nested else Frame(info.module, info.parent, info.segment, None)
        stack = stacked_context(self.evaluator, info, defined, bound, self.stack, wrappers=wrappers)
        closure = {**frame.locals, **bound} if nested else bound
        body = _Body(self.resolver, info, "", stack if isinstance(stack, StackV) else None, self.depth + 1)
        body.local_modules = dict(self.local_modules) if nested else {}
        body.lists = dict(self.lists) if nested else {}
        ret = returns[0]
        start = Frame(info.module, info.scope, info.segment, None, closure, frame.call_depth + 1)
        if info.node.body and info.node.body[-1] is ret:
            start = body.run(info.node.body[:-1], start)
        assert ret.value is not None
        return body.expression(ret.value, replace(start, position=info.scope.order_of.get(id(ret))))

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp, frame: Frame) -> list[RawParam] | None:
        """`[Block(cfg) for _ in range(n)]`: n copies of one resolution when the item does not use
        the loop variables, else each item with its own bindings."""
        names = sorted({n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)})
        probe = ast.copy_location(
            ast.ListComp(ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load()), node.generators),
            node,
        )
        items = self.evaluator.evaluate(probe, frame)
        if isinstance(items, Seq):
            self._sizes[id(node)] = len(items.items)
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
            scoped = replace(frame, locals=self.resolver.keep({**frame.locals, **dict(zip(names, values))}))
            params = self.expression(node.elt, scoped)
            if params is None:
                exhausted = self.evaluator.budget_left == 0  # what was resolved before still counts
                return (found or None) if exhausted else None
            found += [p.under(f"[{index}]") for p in params]
        return found


def _joined(
    before: dict[str, list[RawParam] | _Container],
    one: dict[str, list[RawParam] | _Container],
    other: dict[str, list[RawParam] | _Container],
) -> dict[str, list[RawParam] | _Container]:
    """The attributes after both branches of an undecided `if`: one set differently by the two
    holds what each gave it (both are counted)."""
    joined: dict[str, list[RawParam] | _Container] = {}
    for name in {**before, **one, **other}:
        a, b = one.get(name), other.get(name)
        if a is None or b is None or a is b:
            joined[name] = a if a is not None else b  # type: ignore[assignment]
        else:
            joined[name] = _params_of(a) + _params_of(b)
    return joined


def _params_of(held: list[RawParam] | _Container) -> list[RawParam]:
    return held.params() if isinstance(held, _Container) else held


def _read_first(body: list[ast.stmt], written: frozenset[str] = frozenset()) -> set[str]:
    """Names the statements read before writing them: with `_written`, the values one iteration
    of a loop passes to the next (`d = 2 * d`)."""
    early: set[str] = set()
    for stmt in body:
        if isinstance(stmt, ast.For):
            early |= _reads(stmt.iter) - written
            early |= _read_first(stmt.body + stmt.orelse, written | _stored(stmt.target))
        elif isinstance(stmt, ast.If):
            early |= _reads(stmt.test) - written
            early |= _read_first(stmt.body, written) | _read_first(stmt.orelse, written)
        elif isinstance(stmt, (ast.With, ast.Try, ast.While)):
            early |= _read_first(stmt.body, written)
        else:
            early |= _reads(stmt) - written
        written = written | _written([stmt])
    return early


def _reads(node: ast.AST) -> set[str]:
    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        names.add(node.target.id)
    return names


def _written(body: list[ast.stmt]) -> set[str]:
    return {name for stmt in body for name in _stored(stmt)}


def _stored(node: ast.AST) -> set[str]:
    """The names `node` assigns (a loop target `self.x` assigns none)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


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
