"""The value one binding gives a name, by its kind: an assignment, a loop variable, an augmented
assignment, a list or dict changed in place, a `def` or `class`, an import, a parameter."""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import TYPE_CHECKING

from shardls.analysis.evaluation.fixed_rank import with_fixed_rank
from shardls.analysis.evaluation.frame import Frame
from shardls.analysis.evaluation.known_values import mutated, tuple_options, unpack, with_item
from shardls.analysis.lambda_defs import lambda_def, named_lambda
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.scopes import Binding, Scope
from shardls.analysis.values import (
    Choice,
    ClassV,
    Const,
    FunctionV,
    ModuleV,
    Ref,
    Seq,
    StreamV,
    Unknown,
    Value,
)

if TYPE_CHECKING:
    from shardls.analysis.evaluator import Evaluator


def evaluate_binding(evaluator: Evaluator, binding: Binding, scope: Scope, frame: Frame) -> Value:
    """What `binding` gives its name, in `frame` (where the binding is written)."""
    kind = binding.kind
    statement = binding.node
    if isinstance(binding.value, ast.Lambda) and isinstance(statement, ast.Assign) and scope.owner is None:
        return _named_lambda(evaluator, statement, binding, scope, frame)
    if kind in ("assign", "with") and binding.value is not None:
        value = _unpacked(evaluator, evaluator.eval(binding.value, frame), binding)
        if isinstance(value, Const) and value.origin is not None and value.origin.line == binding.line:
            named = frame.origin(f"`{binding.name}`", binding.node)
            return replace(value, origin=replace(named, assumption=value.origin.assumption))
        return value
    if kind == "for" and binding.value is not None:
        iterable = evaluator.eval(binding.value, frame)
        if isinstance(iterable, Seq) and iterable.items:
            return evaluator.choice([unpack(item, binding.unpack) for item in iterable.items])
        if isinstance(iterable, StreamV):
            return unpack(iterable.item, binding.unpack)
        return Unknown(f"loop variable {binding.name!r}", symbol=binding.name)
    if kind == "augassign" and isinstance(binding.node, ast.AugAssign):
        previous = evaluator.lookup(binding.name, frame, binding.node)
        right = evaluator.eval(binding.node.value, frame)
        return evaluator.binop(type(binding.node.op), previous, right, binding.node, frame)
    if kind == "mutate" and isinstance(binding.value, ast.Call):
        previous = evaluator.lookup(binding.name, frame, binding.node)
        args, kwargs = evaluator.call_arguments(binding.value, frame)
        method = binding.value.func.attr if isinstance(binding.value.func, ast.Attribute) else ""
        return mutated(previous, method, args, kwargs, evaluator.limits.collection) or Unknown(
            f"{binding.name!r} after .{method}()", symbol=binding.name
        )
    if kind == "setitem" and binding.target is not None and binding.value is not None:
        previous = evaluator.lookup(binding.name, frame, binding.node)
        key = evaluator.eval(binding.target.slice, frame)
        return with_item(previous, key, unpack(evaluator.eval(binding.value, frame), binding.unpack))
    if kind == "def" and isinstance(binding.node, ast.FunctionDef | ast.AsyncFunctionDef):
        info = evaluator.function_info(binding.node, frame.module, binding.segment, scope, scope.owner)
        return FunctionV(info, closure=frame if scope.function is not None and frame.locals else None)
    if kind == "class" and isinstance(binding.node, ast.ClassDef):
        return ClassV(evaluator.class_info(binding.node, frame.module, binding.segment, scope))
    if kind in ("import", "importfrom"):
        return _import(evaluator, binding, frame)
    if kind == "rank":
        return with_fixed_rank(evaluator.lookup(binding.name, frame, binding.node), binding)
    if kind == "param":
        if binding.name in frame.locals:
            return frame.locals[binding.name]
        return evaluator.param_default(binding, frame)
    if kind == "annotation":
        return Unknown(f"{binding.name!r} has no value here", symbol=binding.name)
    return Unknown(f"{binding.name!r} ({kind})", symbol=binding.name)


def _unpacked(evaluator: Evaluator, value: Value, binding: Binding) -> Value:
    """The target's part of the assigned value, unpacked from each option of a choice (`logits,
    cache = forward(...)` where `forward` returns `(logits, kvs) if ... else (logits, cache)`):
    unpacking the choice as a whole gave nothing. Each part keeps which option it comes from, as
    if the options were branches of one `if` (`tuple_options`): the targets of one unpacking are
    never combined from two options, which no run assigns together."""
    if not binding.unpack or not isinstance(value, Choice) or binding.value is None:
        return unpack(value, binding.unpack)
    guarded = tuple_options(value, id(binding.value))
    return evaluator.choice(
        [unpack(option, binding.unpack) for option, _ in guarded], [g for _, g in guarded]
    )


def _named_lambda(
    evaluator: Evaluator, statement: ast.Assign, binding: Binding, scope: Scope, frame: Frame
) -> Value:
    """`shard = lambda x, *a: ...`: the function it stands for (`lambda_defs.py`); a lambda
    bound otherwise (`a = b = lambda: ...`) is not evaluated."""
    if named_lambda(statement) is None:
        return Unknown("lambda")
    info = evaluator.function_info(lambda_def(statement), frame.module, binding.segment, scope)
    return FunctionV(info, closure=frame if scope.function is not None and frame.locals else None)


def param_default(evaluator: Evaluator, binding: Binding, frame: Frame) -> Value:
    """A parameter nobody bound: its default, else a symbol named after it."""
    function = frame.scope.function
    if function is not None:
        default = function.default_of(binding.name)
        if default is not None:
            parent = Frame(frame.module, function.parent, function.segment, None, {}, frame.call_depth)
            value = evaluator.eval(default, parent)
            if isinstance(value, Const):
                text = f"default of parameter {binding.name} of {function.qualname}()"
                return replace(value, origin=frame.origin(text, default))
            return value
    return evaluator.library.parameter(frame.scope, binding.name) or Unknown(
        f"parameter {binding.name!r}", symbol=binding.name
    )


def _import(evaluator: Evaluator, binding: Binding, frame: Frame) -> Value:
    alias = binding.node
    assert isinstance(alias, ast.alias)
    statement = binding.statement
    if binding.kind == "import":
        dotted = alias.name if alias.asname else alias.name.split(".")[0]
        module = evaluator.resolver.resolve(frame.module, dotted, 0)
        return ModuleV(module) if module is not None else Ref(evaluator.library.canonical(dotted))
    level = statement.level if isinstance(statement, ast.ImportFrom) else 0
    base = statement.module if isinstance(statement, ast.ImportFrom) else None
    base_name = base or ""
    module = evaluator.resolver.resolve(frame.module, base_name, level)
    if module is not None:
        submodule = (
            evaluator.resolver.resolve(module, alias.name, 1) if module.path.endswith("__init__.py") else None
        )
        value = evaluator.module_attribute(module, alias.name, frame)
        if isinstance(value, Unknown) and submodule is not None:
            return ModuleV(submodule)
        return value
    if level:
        return Unknown(f"relative import {'.' * level}{base_name} not found in the workspace")
    return Ref(evaluator.library.canonical(f"{base_name}.{alias.name}"))


def module_attribute(evaluator: Evaluator, module: ModuleInfo, name: str, frame: Frame) -> Value:
    if evaluator.reads is not None:
        evaluator.reads.modules[module.path] = module
        evaluator.reads.names.add((module.path, name))
    candidates = module.scope.lookup(name, None)
    if not candidates:
        return Unknown(f"{name!r} not found in {module.path}", symbol=name)
    top = Frame(module, module.scope, candidates[-1].segment, None, {}, frame.call_depth)
    return evaluator.bindings_value(candidates, module.scope, top)
