"""The modules an expression in `__init__` builds, and the parameters they create: Flax layers
and variables, workspace modules (their own `__init__`), lists, `nnx.Sequential`, comprehensions,
and factories, also under `nnx.vmap`/`nnx.scan`."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.evaluator import Frame
from shardls.analysis.library import CallArgs
from shardls.analysis.library.nnx import SplitRngsV, StackV, VmapV, stacked_context
from shardls.analysis.recognizers.nnx.layers import LAYER_NAMES
from shardls.analysis.recognizers.nnx.params import LayerParam, layer_params, variable_param
from shardls.analysis.values import ClassV, FunctionV, Ref, Seq, Value, options
from shardls.memory.init_loops import MAX_UNROLLED
from shardls.memory.model import ParamPath
from shardls.memory.module_lists import inferred_length, label_text, shifted
from shardls.memory.raw_param import RawParam

if TYPE_CHECKING:
    from shardls.memory.init_body import InitBody

_LISTS = frozenset(["flax.nnx.List", "builtins.list", "builtins.tuple"])
_WRAPPERS = frozenset(["flax.nnx.List", "flax.nnx.data"])
"""What keeps a list of modules an attribute Flax 0.12 accepts (a plain list is rejected)."""
_SEQUENTIAL = "flax.nnx.Sequential"
_TRANSFORMS = frozenset(["flax.nnx.vmap", "flax.nnx.scan"])
_VARIABLES = frozenset(["flax.nnx.Param"])


class ModuleBuilds:
    """The expressions of one run of an `__init__` (or factory), read in its lists and locals."""

    def __init__(self, body: InitBody) -> None:
        self.body = body
        self.resolver = body.resolver
        self.evaluator = body.evaluator
        self.sizes: dict[int, int] = {}
        """The length of each comprehension evaluated (by node), for the list it makes."""

    def expression(self, node: ast.expr, frame: Frame) -> list[RawParam] | None:
        """The parameters `node` creates, or None when it builds no module."""
        if isinstance(node, ast.Call):
            return self._call(node, frame)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self._comprehension(node, frame)
        if isinstance(node, (ast.List, ast.Tuple)):
            return self._items(node.elts, frame)
        if isinstance(node, ast.Name):
            if node.id in self.body.lists:
                return self.body.lists[node.id].params()
            return self.body.local_modules.get(node.id)
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
            count = self.length(element.value, frame) if isinstance(element, ast.Starred) else 1
            if params is not None:
                any_module = True
                found += shifted(params, index) if starred else [p.under(label_text(index)) for p in params]
            if count is None and params:
                count = inferred_length(params)
            index = None if index is None or count is None else index + count
        return found if any_module else None

    def _call(self, node: ast.Call, frame: Frame) -> list[RawParam] | None:
        transformed = self._transformed(node, frame)
        if transformed is not None:
            return transformed
        func = self.evaluator.evaluate(node.func, frame)
        for option in options(func):
            if isinstance(option, Ref) and option.qualname in LAYER_NAMES:
                return self.layer(option.qualname, node, frame, layer_params)
            if isinstance(option, Ref) and option.qualname in _VARIABLES:
                return self.layer(option.qualname, node, frame, lambda call: [variable_param(call)])
            if isinstance(option, Ref) and option.qualname in (*_LISTS, *_WRAPPERS):
                return self.expression(node.args[0], frame) if node.args else None
            if isinstance(option, Ref) and option.qualname == _SEQUENTIAL:
                items = self._items(node.args, frame)
                return None if items is None else [p.under("layers") for p in items]
            if isinstance(option, ClassV) and self.resolver.is_module(option.cls, frame):
                layer = self.resolver.inherited_layer(option.cls, frame)
                if layer is not None and self.resolver.init_of(option.cls, frame) is None:
                    return self.layer(layer, node, frame, layer_params)
                args, kwargs = self.evaluator.call_arguments(node, frame)
                return self.resolver.resolve_class(
                    option.cls, args, kwargs, frame, self.body.stack, self.body.depth + 1
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

    def layer(
        self, qualname: str, node: ast.Call, frame: Frame, read: Callable[[CallArgs], list[LayerParam]]
    ) -> list[RawParam]:
        if not self.resolver.spend():
            return []
        args, kwargs = self.evaluator.call_arguments(node, frame)
        call = CallArgs(self.evaluator, self.resolver.library, qualname, args, kwargs, node, frame)
        levels = self.body.stack.levels if self.body.stack is not None else ()
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
        if not returns or not self.evaluator.within_call_depth(frame):
            return None
        args, kwargs = self.evaluator.call_arguments(node, frame)
        bound = self.evaluator.bind_arguments(info, args, kwargs, None, frame)
        nested = info.parent is self.body.init.scope
        defined = frame if nested else Frame(info.module, info.parent, info.segment, None)
        stack = stacked_context(self.evaluator, info, defined, bound, self.body.stack, wrappers=wrappers)
        closure = {**frame.locals, **bound} if nested else bound
        body = self.body.factory(info, stack if isinstance(stack, StackV) else None, nested)
        ret = returns[0]
        start = Frame(info.module, info.scope, info.segment, None, closure, frame.call_depth + 1)
        if info.node.body and info.node.body[-1] is ret:
            start = body.run(info.node.body[:-1], start)
        assert ret.value is not None
        return body.builds.expression(ret.value, replace(start, position=info.scope.order_of.get(id(ret))))

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
            self.sizes[id(node)] = len(items.items)
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

    def is_list(self, node: ast.expr, frame: Frame) -> bool:
        if isinstance(node, (ast.List, ast.Tuple, ast.ListComp)):
            return True
        if isinstance(node, ast.Name):
            return node.id in self.body.lists
        if isinstance(node, ast.Call):
            name = self._library_name(node.func, frame)
            if name in _LISTS:
                return True
            return name == "flax.nnx.data" and bool(node.args) and self.is_list(node.args[0], frame)
        return False

    def is_wrapped(self, node: ast.expr, frame: Frame) -> bool:
        return isinstance(node, ast.Call) and self._library_name(node.func, frame) in _WRAPPERS

    def _library_name(self, node: ast.expr, frame: Frame) -> str | None:
        value = self.evaluator.evaluate(node, frame)
        return value.qualname if isinstance(value, Ref) else None

    def length(self, node: ast.expr, frame: Frame) -> int | None:
        """How many items a list expression has, when the analysis can tell."""
        if isinstance(node, (ast.List, ast.Tuple)):
            total = 0
            for element in node.elts:
                count = self.length(element.value, frame) if isinstance(element, ast.Starred) else 1
                if count is None:
                    return None
                total += count
            return total
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self.sizes.get(id(node))
        if isinstance(node, ast.Name):
            container = self.body.lists.get(node.id)
            return container.length if container is not None else None
        if isinstance(node, ast.Call) and self.is_list(node, frame):
            return self.length(node.args[0], frame) if node.args else 0
        return None
