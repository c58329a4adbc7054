"""Attributes, classes and instances: attributes of modules, classes and instances (fields,
`self.x = ...` in constructors, properties, enum members), base classes, and the instances a
constructor builds."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shardls.analysis.definitions import ClassInfo, FunctionInfo
from shardls.analysis.evaluation.calls import EMPTY_CALL, branches_taken, statement_guards
from shardls.analysis.evaluation.choices import map_options
from shardls.analysis.evaluation.class_modules import class_module
from shardls.analysis.evaluation.frame import Frame
from shardls.analysis.scope_builder import attribute_key
from shardls.analysis.values import ClassV, Const, FunctionV, InstanceV, ModuleV, Ref, Unknown, Value

if TYPE_CHECKING:
    from shardls.analysis.evaluation.frame import ExpressionHandlers
    from shardls.analysis.evaluator import Evaluator


def _eval_Attribute(evaluator: Evaluator, node: ast.Attribute, frame: Frame) -> Value:
    if isinstance(node.value, ast.Name):
        assigned = evaluator.assigned_attribute(node.value.id, node.attr, frame)
        if assigned is not None:
            return assigned
    base = evaluator.eval(node.value, frame)
    return evaluator.attribute(base, node.attr, node, frame)


def assigned_attribute(evaluator: Evaluator, name: str, attr: str, frame: Frame) -> Value | None:
    """`name.attr` as assigned earlier in the same function or module (`cls.config =
    Config.big()` in a test's `setUpClass`, then `Model(cls.config)`), whatever object
    `name` holds; None when no such assignment reaches here."""
    key = attribute_key(name, attr)
    scope = frame.scope
    if scope.kind == "class":
        return None
    if scope.module is not None and scope.kind == "module" and evaluator.reads is not None:
        evaluator.reads.names.add((scope.module.path, key))
    candidates = scope.lookup(key, frame.position)
    return evaluator.bindings_value(candidates, scope, frame) if candidates else None


def attribute(evaluator: Evaluator, base: Value, attr: str, node: ast.AST, frame: Frame) -> Value:
    return map_options(evaluator, base, lambda b: _attribute(evaluator, b, attr, node, frame))


def _attribute(evaluator: Evaluator, base: Value, attr: str, node: ast.AST, frame: Frame) -> Value:
    if isinstance(base, Ref):
        special = evaluator.library.attribute(evaluator, base, attr, node, frame)
        return special if special is not None else Ref(evaluator.library.canonical(f"{base.qualname}.{attr}"))
    if isinstance(base, ModuleV):
        value = evaluator.module_attribute(base.module, attr, frame)
        if isinstance(value, Unknown):
            submodule = evaluator.resolver.resolve(base.module, attr, 1)
            if submodule is not None:
                return ModuleV(submodule)
        return value
    if isinstance(base, ClassV):
        module = class_module(base.cls) if attr == "__module__" else None
        return module or evaluator.class_attribute(base.cls, attr, frame, bound=base)
    if isinstance(base, InstanceV):
        return evaluator.instance_attribute(base, attr, frame)
    special = evaluator.library.attribute(evaluator, base, attr, node, frame)
    if special is not None:
        return special
    return Unknown(f"attribute {attr!r} of an unknown value", symbol=attr)


def class_attribute(
    evaluator: Evaluator, cls: ClassInfo, attr: str, frame: Frame, bound: Value | None
) -> Value:
    for klass in evaluator.mro(cls, frame):
        if attr in klass.methods:
            note_method(evaluator, klass, attr)
            method = klass.methods[attr]
            if method.kind == "staticmethod":
                return FunctionV(method)
            if method.kind == "classmethod":
                return FunctionV(method, bound=ClassV(cls) if not isinstance(bound, InstanceV) else bound)
            return FunctionV(method, bound=bound if isinstance(bound, InstanceV) else None)
        candidates = klass.scope.lookup(attr, None)
        if candidates:
            note_method(evaluator, klass, "*")  # a class-level name may hold a method (`__call__ = forward`)
            top = Frame(klass.module, klass.scope, klass.segment, None, {}, frame.call_depth)
            value = evaluator.bindings_value(candidates, klass.scope, top)
            if evaluator.is_enum(klass, frame) and not isinstance(value, FunctionV):
                return InstanceV(klass, (("value", value), ("name", Const(attr))))
            return value
    return Unknown(f"{cls.name}.{attr} not found", symbol=f"{cls.name}.{attr}")


def note_method(evaluator: Evaluator, klass: ClassInfo, name: str) -> None:
    """Note that the evaluation read the method `name` of `klass` (`*`: all its methods), if
    reads are being noted (`Reads.methods`)."""
    if evaluator.reads is not None:
        evaluator.reads.methods.add((klass.module.path, f"{klass.name}.{name}"))


def instance_attribute(evaluator: Evaluator, instance: InstanceV, attr: str, frame: Frame) -> Value:
    """`evaluator.x = ...` in `__init__`/`__post_init__`/`setup` first (a plain class's constructor
    parameters are not its attributes; a dataclass's `__post_init__` may overwrite a field),
    then the fields the instance was built with, then class attributes."""
    for klass in evaluator.mro(instance.cls, frame):
        assignments = klass.self_assignments.get(attr, ())
        found = [_self_assignment(evaluator, instance, method, stmt, frame) for method, stmt in assignments]
        values = [value for value in found if value is not None]
        if values:
            return evaluator.choice(values)
    bound = instance.field_value(attr)
    if bound is not None:
        return bound
    value = evaluator.class_attribute(instance.cls, attr, frame, bound=instance)
    if isinstance(value, FunctionV) and value.func.kind == "property":
        return evaluator.call(value, [], {}, None, frame)
    if isinstance(value, Unknown):
        return (
            evaluator.library.attribute(evaluator, instance, attr, instance.call or EMPTY_CALL, frame)
            or value
        )
    return value


def _self_assignment(
    evaluator: Evaluator, instance: InstanceV, method: FunctionInfo, stmt: ast.stmt, frame: Frame
) -> Value | None:
    """The value `self.x = ...` gives; None when an `if` around it is decided against it for
    this instance's arguments (`if with_scale: self.scale = ...`)."""
    if not evaluator.within_call_depth(frame):
        return Unknown("calls nested too deeply")
    locals_ = evaluator.bind_arguments(method, [], dict(instance.fields), instance, frame)
    guards = statement_guards(method.node).get(id(stmt), ())
    called = Frame(method.module, method.scope, method.segment, None, locals_, frame.call_depth + 1)
    if not branches_taken(evaluator, method, guards, called):
        return None
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
    return evaluator.eval(value_node, inner)


def mro(evaluator: Evaluator, cls: ClassInfo, frame: Frame) -> list[ClassInfo]:
    """The class and its workspace base classes, depth first (enough for configs and modules)."""
    return [klass for klass, _ in _with_bases(evaluator, cls, frame)]


def base_qualnames(evaluator: Evaluator, cls: ClassInfo, frame: Frame) -> set[str]:
    """Library classes a workspace class derives from (e.g. `flax.nnx.Module`, `enum.Enum`)."""
    return {
        value.qualname
        for _, bases in _with_bases(evaluator, cls, frame)
        for value in bases
        if isinstance(value, Ref)
    }


def _with_bases(evaluator: Evaluator, cls: ClassInfo, frame: Frame) -> list[tuple[ClassInfo, list[Value]]]:
    """`mro`, each class with the values of its bases: `base_qualnames` reads both, and
    evaluated every base again after `mro` had (at every instantiation of a class, 16,000 of
    maxtext's evaluation steps)."""
    order: list[tuple[ClassInfo, list[Value]]] = []
    stack = [cls]
    while stack and len(order) < 32:
        klass = stack.pop(0)
        if any(klass is seen for seen, _ in order):
            continue
        base_frame = Frame(klass.module, klass.parent, klass.segment, None, {}, frame.call_depth)
        values = [evaluator.eval(base, base_frame) for base in klass.node.bases]
        order.append((klass, values))
        stack.extend(value.cls for value in values if isinstance(value, ClassV))
    return order


def is_enum(evaluator: Evaluator, cls: ClassInfo, frame: Frame) -> bool:
    return any(q.startswith("enum.") for q in evaluator.base_qualnames(cls, frame))


def instantiate(
    evaluator: Evaluator,
    cls: ClassInfo,
    args: list[Value],
    kwargs: dict[str, Value],
    node: ast.Call | None,
    frame: Frame,
) -> Value:
    bases = evaluator.base_qualnames(cls, frame)
    library = evaluator.library.instantiate(evaluator, cls, args, kwargs, node, frame)
    if library is not None:
        return library
    init = next((k.methods["__init__"] for k in evaluator.mro(cls, frame) if "__init__" in k.methods), None)
    if init is not None and not _is_generated_init(cls, frame, bases):
        # `evaluator` takes no argument; the instance's fields are the other parameters.
        fields = evaluator.bind_arguments(init, args, kwargs, Unknown("evaluator"), frame)
        fields.pop(init.params[0].arg if init.params else "evaluator", None)
        return InstanceV(cls, tuple(fields.items()), node)
    names = [n for klass in reversed(evaluator.mro(cls, frame)) for n in klass.field_names]
    fields_map: dict[str, Value] = dict(zip(dict.fromkeys(names), args))
    fields_map.update(kwargs)
    return InstanceV(cls, tuple(fields_map.items()), node)


def _is_generated_init(cls: ClassInfo, frame: Frame, bases: set[str]) -> bool:
    decorated = any(d.rsplit(".", 1)[-1] in ("dataclass", "define", "frozen") for d in cls.decorators)
    return decorated or any(b.endswith(("NamedTuple", "PyTreeNode", "struct.PyTreeNode")) for b in bases)


EXPRESSIONS: ExpressionHandlers = {
    ast.Attribute: _eval_Attribute,
}
"""The expressions this module evaluates (`Evaluator.eval` dispatches on the node's type)."""
