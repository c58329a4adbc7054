"""How the methods of a Flax Linen module run: with `self` the module as the code builds it.

Nothing in the code calls `__call__` or `setup` by name: Flax does, when the module is applied
(`MLP(4, 1024)(x)` inside a parent's `@nn.compact` method) or initialised
(`model.init(key, x)`, `model.apply(variables, x)`). Without this the body's `self.depth` and
`x` would be unknown. Each such method's body runs once per module built where the class is
called (its dataclass fields bound), with the input the module is applied to when that is
visible; else once with a module of unknown fields, as code no visible call reaches.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import replace

from shardls.analysis.evaluator import Frame
from shardls.analysis.library.linen import LINEN_MODULE, applying
from shardls.analysis.library.linen_lifted import LIFTED, lifted_level, stacked
from shardls.analysis.scopes import ClassInfo, FunctionInfo
from shardls.analysis.values import ClassV, InstanceV, Ref, Value, options
from shardls.analysis.walker import MAX_CONTEXTS, UNKNOWN_CALLER, Context, Visit, Walker, body_contexts

_APPLYING = ("init", "apply", "init_with_output")
"""Methods of a Linen module that run `__call__` with the arguments after the first."""


@body_contexts(rank=3, traced=False)  # Linen module methods: `self` and the module's input
def _linen_method(
    walker: Walker, info: FunctionInfo, frame: Frame, context: Context, depth: int
) -> list[tuple[dict[str, Value], Context]]:
    owner = info.owner
    if owner is None or info.kind != "method" or not info.params or info.name == "__init__":
        return []
    if LINEN_MODULE not in walker.evaluator.base_qualnames(owner, frame):
        return []
    found: list[tuple[dict[str, Value], Context]] = []
    for instance, args, kwargs, caller in _applications(walker, owner, info.name == "__call__", depth):
        locals_ = walker.evaluator.bind_arguments(info, args, kwargs, instance, frame)
        found.append((locals_, caller))
        if len(found) >= MAX_CONTEXTS:
            break
    if not found:
        alone = InstanceV(owner, ())
        found.append((walker.evaluator.bind_arguments(info, [], {}, alone, frame), UNKNOWN_CALLER))
    return found


def _applications(
    walker: Walker, owner: ClassInfo, with_input: bool, depth: int
) -> Iterator[tuple[InstanceV, list[Value], dict[str, Value], Context]]:
    """Each module of this class the code builds, with the input it is applied to (`Cls(...)(x)`,
    `model.init(key, x)`) when `with_input` and one is visible, else with no arguments."""
    evaluator = walker.evaluator
    applied: list[tuple[InstanceV, list[Value], dict[str, Value], Context]] = []
    if with_input:
        for name in _APPLYING:
            for visit in walker.calls_named(name, depth):
                if not isinstance(visit.call.func, ast.Attribute):
                    continue
                instance = _instance_of(evaluator.evaluate(visit.call.func.value, visit.frame), owner)
                if instance is None:
                    continue
                args, kwargs = evaluator.call_arguments(visit.call, visit.frame)
                where = f"{name}(...) at line {visit.frame.line_of(visit.call) + 1}"
                applied.append((instance, args[1:], kwargs, _called_from(visit, where)))
    built: list[tuple[InstanceV, list[Value], dict[str, Value], Context]] = []
    for visit in walker.calls_named(owner.name, depth):
        instance = _instance_of(evaluator.evaluate(visit.call, visit.frame), owner)
        if instance is None:
            continue
        outer = applying(visit.statement, visit.call) if with_input else None
        where = f"{owner.name}(...) at line {visit.frame.line_of(visit.call) + 1}"
        if outer is None:
            # Applied where shardls does not see it (`jax.jit(model.init)(...)`): maybe under jit.
            unseen = replace(_called_from(visit, where), unknown_caller=True, traced=None)
            built.append((instance, [], {}, unseen))
            continue
        args, kwargs = evaluator.call_arguments(outer, visit.frame)
        applied.append((instance, args, kwargs, _called_from(visit, where)))
    applied += _lifted(walker, owner, with_input, depth)
    # A module built and applied elsewhere (`model = MLP(...)`, then `model.init(key, x)`) runs
    # with that input; one whose application is not visible runs with no argument.
    yield from applied or built


def _lifted(
    walker: Walker, owner: ClassInfo, with_input: bool, depth: int
) -> list[tuple[InstanceV, list[Value], dict[str, Value], Context]]:
    """`nn.scan(Cls, ...)(args)(carry)` / `nn.vmap(Cls, ...)(args)(x)`: the module built from
    `args`, its parameters stacked (`linen_lifted.py`). Only the scan's carry reaches the body
    whole; what the transform slices is not passed."""
    evaluator = walker.evaluator
    found: list[tuple[InstanceV, list[Value], dict[str, Value], Context]] = []
    for qualname in LIFTED:
        for visit in walker.calls_named(qualname.rsplit(".", 1)[-1], depth):
            func = evaluator.evaluate(visit.call.func, visit.frame)
            wrapped = evaluator.evaluate(visit.call.args[0], visit.frame) if visit.call.args else None
            if not (isinstance(func, Ref) and func.qualname == qualname and isinstance(wrapped, ClassV)):
                continue
            built = applying(visit.statement, visit.call)
            if wrapped.cls.node is not owner.node or built is None:
                continue
            level = lifted_level(evaluator, qualname, visit.call, visit.frame)
            args, kwargs = evaluator.call_arguments(built, visit.frame)
            instance = evaluator.instantiate(wrapped.cls, args, kwargs, built, visit.frame)
            if not isinstance(instance, InstanceV):
                continue
            applied = applying(visit.statement, built) if with_input else None
            carry = evaluator.call_arguments(applied, visit.frame)[0][:1] if applied is not None else []
            where = f"{level.how if level else qualname} of {owner.name}"
            context = _called_from(visit, where)
            if level is not None:
                context = replace(context, stacked=stacked(visit.context.stacked, level))
            found.append((instance, carry if qualname == "flax.linen.scan" else [], {}, context))
    return found


def _instance_of(value: Value, owner: ClassInfo) -> InstanceV | None:
    return next((o for o in options(value) if isinstance(o, InstanceV) and o.cls.node is owner.node), None)


def _called_from(visit: Visit, where: str) -> Context:
    return replace(visit.context, call_site=where)
