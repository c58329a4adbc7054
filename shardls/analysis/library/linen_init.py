"""`model.init(key, x)` of a Linen module as a value: `{'params': {...}}`, keyed as Flax keys it.

The tree is read from the module's `@nn.compact __call__` the way Flax builds it: statement by
statement, a layer `nn.Dense(...)` is `Dense_0`, `Dense_1`, ... (or its `name=`), a submodule
`Block(...)(x)` is `Block_0` with its own tree, `self.param('w', ...)` is `w`; a loop over a known
range repeats its body. A parameter with a partitioned initializer is a `PartitionedV` (what
`nn.get_partition_spec` reads), any other an array.

Anything that may create parameters shardls does not model makes the whole tree unknown, never a
tree with a part missing: a `setup` module, a layer or transform it does not model (`nn.scan`,
`nn.MultiHeadDotProductAttention`), a submodule held in an attribute, a workspace function that
may build layers, a branch or loop it cannot decide, a callee it cannot evaluate.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.evaluator import Evaluator, Frame, truthiness
from shardls.analysis.library import CallArgs, Library
from shardls.analysis.library.convert import spec_of
from shardls.analysis.library.linen import LINEN_MODULE, PARAM, PartitionedInitV, applying, param_array
from shardls.analysis.library.linen_lifted import LIFTED, LinenLevel, lifted_level
from shardls.analysis.library.linen_specs import PartitionedV
from shardls.analysis.library.pytrees import mapped
from shardls.analysis.library.registry import methods
from shardls.analysis.values import (
    ArrayV,
    BoundMethod,
    ClassV,
    Const,
    DictV,
    FunctionV,
    InstanceV,
    Ref,
    Seq,
    Unknown,
    Value,
)

MAX_DEPTH = 8
"""Submodules nested deeper than this make the tree unknown."""
MAX_REPEATS = 64
"""Iterations of a loop that creates layers, at most."""
_PARAM_FREE = frozenset({"Dropout"})
"""Linen modules with no parameters (lower-case names are functions, also without any)."""
_TRANSFORMS = frozenset({"scan", "vmap", "remat", "checkpoint", "jit", "map_variables", "while_loop", "cond"})
"""Lower-case Linen names that create the parameters of the module they wrap."""


class _NotModelled(Exception):
    """Something in the module may create parameters shardls does not model."""


@methods(InstanceV, "init", "init_with_output")
def _init(library: Library, method: BoundMethod, call: CallArgs) -> Value | None:
    """`model.init(key, *args)`: the variables of a Linen module applied to `args`."""
    if not isinstance(method.base, InstanceV):
        return None
    if LINEN_MODULE not in call.evaluator.base_qualnames(method.base.cls, call.frame):
        return None
    variables = linen_variables(call, method.base, call.args[1:], call.kwargs)
    if method.name == "init_with_output":
        return Seq((Unknown("the module's output"), variables))
    return variables


def linen_variables(call: CallArgs, module: InstanceV, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """`{'params': tree}` for the module applied to `args` (by the library call `call`);
    unknown when not modelled."""
    try:
        tree = _tree(call.evaluator, call.library, module, args, kwargs, call.frame, 0)
        return DictV((Const("params"),), (tree,))
    except _NotModelled as reason:
        return Unknown(f"the parameters of {module.cls.name}: {reason}")


def _tree(
    evaluator: Evaluator,
    library: Library,
    module: InstanceV,
    args: list[Value],
    kwargs: dict[str, Value],
    frame: Frame,
    depth: int,
) -> DictV:
    if depth > MAX_DEPTH:
        raise _NotModelled("submodules nested too deeply")
    classes = evaluator.mro(module.cls, frame)
    if any("setup" in klass.methods for klass in classes):
        raise _NotModelled("a module with setup")
    method = next((klass.methods["__call__"] for klass in classes if "__call__" in klass.methods), None)
    if method is None:
        raise _NotModelled("no __call__ in the module")
    locals_ = evaluator.bind_arguments(method, args, kwargs, module, frame)
    builder = _Builder(evaluator, library, method, locals_, frame.call_depth + 1, depth)
    builder.statements(method.node.body)
    return DictV(tuple(Const(k) for k in builder.entries), tuple(builder.entries.values()))


@dataclass
class _Builder:
    """Walks one compact method's body, collecting its parameters and submodules in order."""

    evaluator: Evaluator
    library: Library
    method: FunctionInfo
    locals_: dict[str, Value]
    call_depth: int
    depth: int
    entries: dict[str, Value] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def frame(self, statement: ast.stmt) -> Frame:
        scope = self.method.scope
        return Frame(
            self.method.module,
            scope,
            self.method.segment,
            scope.order_of.get(id(statement)),
            self.locals_,
            self.call_depth,
        )

    def statements(self, body: list[ast.stmt]) -> None:
        for statement in body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(statement, ast.For):
                self._loop(statement)
            elif isinstance(statement, ast.If):
                taken = truthiness(self.evaluator.evaluate(statement.test, self.frame(statement)))
                if taken is None:
                    raise _NotModelled("a branch shardls cannot decide")
                self.statements(statement.body if taken else statement.orelse)
            elif isinstance(statement, (ast.With, ast.Try)):
                self.statements(statement.body)
            elif isinstance(statement, (ast.While, ast.AsyncFor, ast.AsyncWith, ast.Match)):
                if any(isinstance(n, ast.Call) for n in ast.walk(statement)):
                    raise _NotModelled(f"a {type(statement).__name__.lower()} statement")
            else:
                for call in _calls(statement):
                    self._call(call, statement)
            if isinstance(statement, (ast.Return, ast.Raise)):
                return

    def _loop(self, loop: ast.For) -> None:
        items = self.evaluator.evaluate(loop.iter, self.frame(loop))
        if not isinstance(items, Seq) or len(items.items) > MAX_REPEATS or loop.orelse:
            raise _NotModelled("a loop over items shardls cannot list")
        for item in items.items:
            if isinstance(loop.target, ast.Name):
                self.locals_[loop.target.id] = item
            self.statements(loop.body)

    def _call(self, call: ast.Call, statement: ast.stmt) -> None:
        if isinstance(call.func, ast.Call):
            return  # `nn.Dense(8)(x)`: applies the layer the inner call built (counted there)
        frame = self.frame(statement)
        callee = self.evaluator.evaluate(call.func, frame)
        if isinstance(callee, Ref):
            self._library(callee.qualname, call, statement, frame)
        elif isinstance(callee, ClassV) and LINEN_MODULE in self.evaluator.base_qualnames(callee.cls, frame):
            self._submodule(call, statement, frame)
        elif isinstance(callee, FunctionV) and _may_build_layers(self.evaluator, callee.func, frame):
            raise _NotModelled(f"{callee.func.name}() may create layers")
        elif isinstance(callee, InstanceV) and LINEN_MODULE in self.evaluator.base_qualnames(
            callee.cls, frame
        ):
            raise _NotModelled("a submodule held in an attribute")
        elif isinstance(callee, Unknown):
            raise _NotModelled(f"a call shardls cannot follow ({ast.unparse(call.func)[:40]})")

    def _library(self, qualname: str, call: ast.Call, statement: ast.stmt, frame: Frame) -> None:
        from shardls.analysis.recognizers.linen import LAYER_NAMES, applied_shape, layer_params

        name = qualname.rsplit(".", 1)[-1]
        if qualname == PARAM:
            args, kwargs = self.evaluator.call_arguments(call, frame)
            key = args[0] if args else kwargs.get("name")
            if not (isinstance(key, Const) and isinstance(key.value, str)):
                raise _NotModelled("a parameter whose name is not known")
            param = CallArgs(self.evaluator, self.library, qualname, args, kwargs, call, frame)
            self.entries[key.value] = _leaf(param_array(param), param.get(1, "init_fn"))
        elif qualname in LAYER_NAMES:
            args, kwargs = self.evaluator.call_arguments(call, frame)
            layer = CallArgs(self.evaluator, self.library, qualname, args, kwargs, call, frame)
            shape = applied_shape(self.evaluator, statement, call, frame)
            params = {p.name: _leaf(ArrayV(p.shape, p.dtype), p.init) for p in layer_params(layer, shape)}
            self.entries[self._name(name, kwargs)] = DictV(
                tuple(Const(k) for k in params), tuple(params.values())
            )
        elif qualname in LIFTED:
            self._lifted(qualname, call, statement, frame)
        elif _creates_params(qualname):
            raise _NotModelled(f"nn.{name}, which shardls does not model")

    def _lifted(self, qualname: str, call: ast.Call, statement: ast.stmt, frame: Frame) -> None:
        """`nn.scan(Cls, ...)(args)(carry)`: `ScanCls_0`, the tree of `Cls` with every parameter
        stacked (`linen_lifted.py`); only the scan's carry reaches the body whole."""
        wrapped = self.evaluator.evaluate(call.args[0], frame) if call.args else None
        built = applying(statement, call)
        applied = applying(statement, built)
        if not isinstance(wrapped, ClassV) or built is None or applied is None:
            raise _NotModelled(f"nn.{qualname.rsplit('.', 1)[-1]} of something shardls cannot build")
        args, kwargs = self.evaluator.call_arguments(built, frame)
        module = self.evaluator.instantiate(wrapped.cls, args, kwargs, built, frame)
        if not isinstance(module, InstanceV):
            raise _NotModelled("a module shardls cannot build")
        scan = qualname == "flax.linen.scan"
        carry = self.evaluator.call_arguments(applied, frame)[0][:1] if scan else []
        subtree = _tree(self.evaluator, self.library, module, carry, {}, frame, self.depth + 1)
        level = lifted_level(self.evaluator, qualname, call, frame)
        prefix = "Scan" if scan else "Vmap"
        name = self._name(prefix + wrapped.cls.name, kwargs)
        self.entries[name] = _stacked_tree(subtree, level) if level is not None else subtree

    def _submodule(self, call: ast.Call, statement: ast.stmt, frame: Frame) -> None:
        module = self.evaluator.evaluate(call, frame)
        if not isinstance(module, InstanceV):
            raise _NotModelled("a submodule shardls cannot build")
        applied = applying(statement, call)
        if applied is None:
            raise _NotModelled(f"{module.cls.name} built but applied elsewhere")
        args, kwargs = self.evaluator.call_arguments(applied, frame)
        _, own = self.evaluator.call_arguments(call, frame)
        subtree = _tree(self.evaluator, self.library, module, args, kwargs, frame, self.depth + 1)
        self.entries[self._name(module.cls.name, own)] = subtree

    def _name(self, cls: str, kwargs: dict[str, Value]) -> str:
        """`name=`, else Flax's automatic `Cls_<n>` (counted per class in this module)."""
        given = kwargs.get("name")
        if isinstance(given, Const) and isinstance(given.value, str):
            return given.value
        if given is not None and not (isinstance(given, Const) and given.value is None):
            raise _NotModelled("a layer whose name is not known")
        index = self.counts.get(cls, 0)
        self.counts[cls] = index + 1
        return f"{cls}_{index}"


def _calls(statement: ast.stmt) -> Iterator[ast.Call]:
    """The calls of a statement in the order they run (the callee before what applies it)."""
    found = [n for n in ast.walk(statement) if isinstance(n, ast.Call) and not _in_lambda(n, statement)]
    found.sort(key=lambda n: (n.lineno, n.col_offset, n.end_lineno or 0, n.end_col_offset or 0))
    return iter(found)


def _in_lambda(call: ast.Call, statement: ast.stmt) -> bool:
    return any(isinstance(n, ast.Lambda) and call in ast.walk(n) for n in ast.walk(statement))


def _may_build_layers(evaluator: Evaluator, function: FunctionInfo, frame: Frame) -> bool:
    """A workspace function that builds a Linen layer or calls `.param(...)` creates parameters
    in the module that calls it (Linen attaches them to that module); its callees are read
    where it is defined, so a name it binds itself counts as building nothing."""
    outer = Frame(function.module, function.parent, function.segment, None, {}, frame.call_depth + 1)
    for node in ast.walk(function.node):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr == "param":
            return True
        callee = evaluator.evaluate(node.func, outer)
        if isinstance(callee, Ref) and _creates_params(callee.qualname):
            return True
        if isinstance(callee, ClassV) and LINEN_MODULE in evaluator.base_qualnames(callee.cls, outer):
            return True
    return False


def _creates_params(qualname: str) -> bool:
    """A Linen layer or transform (lower-case names are functions without parameters)."""
    name = qualname.rsplit(".", 1)[-1]
    return qualname.startswith("flax.linen.") and (
        name in _TRANSFORMS or (name[:1].isupper() and name not in _PARAM_FREE)
    )


def _stacked_tree(tree: Value, level: LinenLevel) -> Value:
    """Every parameter with the axis the transform adds (`Partitioned.add_axis` for the names)."""
    from shardls.analysis.recognizers.nnx.stacking import insert_spec_entry

    axis = level.axis
    if axis is None:
        raise _NotModelled(f"{level.how}: variable_axes not known")

    def stack(leaf: Value) -> Value:
        array = leaf.value if isinstance(leaf, PartitionedV) else leaf
        if not isinstance(array, ArrayV) or array.shape is None:
            return Unknown("a parameter of unknown shape")
        grown = ArrayV((*array.shape[:axis], level.size, *array.shape[axis:]), array.dtype)
        if not isinstance(leaf, PartitionedV):
            return grown
        names = spec_of(leaf.names)
        if level.partition is None:
            raise _NotModelled(f"{level.how} names no partition (Flax raises PartitioningUnspecifiedError)")
        if names is None:
            return Unknown("axis names shardls cannot read")
        return PartitionedV(grown, insert_spec_entry(names, axis, level.partition), leaf.mesh)

    return mapped(tree, stack)


def _leaf(array: ArrayV, init: Value | None) -> Value:
    if isinstance(init, PartitionedInitV):
        return PartitionedV(array, init.names, init.mesh)
    return array
