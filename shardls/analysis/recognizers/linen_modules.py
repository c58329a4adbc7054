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
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TypeVar

from shardls.analysis.definitions import ClassInfo, FunctionInfo
from shardls.analysis.evaluator import Evaluator, Frame
from shardls.analysis.library.linen import LINEN_MODULE, applying
from shardls.analysis.library.linen_lifted import LIFTED, lifted_level, stacked
from shardls.analysis.reuse import reuse_of
from shardls.analysis.values import ClassV, InstanceV, Ref, Value, options
from shardls.analysis.walker import MAX_CONTEXTS, UNKNOWN_CALLER, Context, Visit, Walker, body_contexts

T = TypeVar("T")
_Applied = tuple[InstanceV, list[Value], dict[str, Value], Context]
"""A module of the class, the arguments it is applied to, and where."""

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


def _applications(walker: Walker, owner: ClassInfo, with_input: bool, depth: int) -> list[_Applied]:
    """Each module of this class the code builds, with the input it is applied to (`Cls(...)(x)`,
    `model.init(key, x)`) when `with_input` and one is visible, else with no arguments. Found
    once per analysis (`analysis/reuse.py`): every method of the class asks the same."""
    key = ("linen applications", id(owner.node), id(walker.module), with_input, depth)
    return reuse_of(walker.evaluator).answer(
        key, (owner.node, walker.module), lambda: _find_applications(walker, owner, with_input, depth)
    )


def _find_applications(walker: Walker, owner: ClassInfo, with_input: bool, depth: int) -> list[_Applied]:
    evaluator = walker.evaluator
    applied: list[_Applied] = []
    if with_input:
        for name in _APPLYING:
            for visit, instance in _by_class(walker, name, depth, _receivers).get(owner.node, ()):
                args, kwargs = evaluator.call_arguments(visit.call, visit.frame)
                where = f"{name}(...) at line {visit.frame.line_of(visit.call) + 1}"
                applied.append((instance, args[1:], kwargs, _called_from(visit, where)))
    built: list[_Applied] = []
    for visit, instance in _by_class(walker, owner.name, depth, _built).get(owner.node, ()):
        outer = _applying(visit) if with_input else None
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
    return applied or built


def _lifted(walker: Walker, owner: ClassInfo, with_input: bool, depth: int) -> list[_Applied]:
    """`nn.scan(Cls, ...)(args)(carry)` / `nn.vmap(Cls, ...)(args)(x)`: the module built from
    `args`, its parameters stacked (`linen_lifted.py`). Only the scan's carry reaches the body
    whole; what the transform slices is not passed."""
    evaluator = walker.evaluator
    found: list[_Applied] = []
    for qualname in LIFTED:
        for visit, (lifting, wrapped) in _by_class(walker, _called(qualname), depth, _lifts).get(
            owner.node, ()
        ):
            built = _applying(visit)
            if lifting != qualname or built is None:
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


def _by_class(
    walker: Walker, name: str, depth: int, read: Callable[[Evaluator, Visit], Iterator[tuple[ast.AST, T]]]
) -> dict[ast.AST, list[tuple[Visit, T]]]:
    """The calls `name(...)` (`walker.calls_named`) by the module class `read` finds at each, in
    the order of the walk. Found once per analysis (`analysis/reuse.py`) for every Linen class and
    method that asks, since what it evaluates does not depend on the class: each method of each
    class used to evaluate the receiver of every `init` and `apply` call of the file again (nearly
    every test of flax calls them), and, before the walker kept its searches, walk them again."""
    evaluator = walker.evaluator

    def find() -> dict[ast.AST, list[tuple[Visit, T]]]:
        found: dict[ast.AST, list[tuple[Visit, T]]] = {}
        for visit in walker.calls_named(name, depth):
            for cls, what in read(evaluator, visit):
                found.setdefault(cls, []).append((visit, what))
        return found

    key = ("linen calls", read, id(walker.module), name, depth)
    return reuse_of(evaluator).answer(key, (walker.module,), find)


def _receivers(evaluator: Evaluator, visit: Visit) -> Iterator[tuple[ast.AST, InstanceV]]:
    """The modules `x.init(...)` may be called on."""
    func = visit.call.func
    if isinstance(func, ast.Attribute):
        yield from _modules(evaluator.evaluate(func.value, visit.frame))


def _built(evaluator: Evaluator, visit: Visit) -> Iterator[tuple[ast.AST, InstanceV]]:
    """The modules `Cls(...)` may build."""
    yield from _modules(evaluator.evaluate(visit.call, visit.frame))


def _lifts(evaluator: Evaluator, visit: Visit) -> Iterator[tuple[ast.AST, tuple[str, ClassV]]]:
    """The lifted transform `nn.scan(Cls, ...)` is, and the class it lifts."""
    func = evaluator.evaluate(visit.call.func, visit.frame)
    wrapped = evaluator.evaluate(visit.call.args[0], visit.frame) if visit.call.args else None
    if isinstance(func, Ref) and func.qualname in LIFTED and isinstance(wrapped, ClassV):
        yield wrapped.cls.node, (func.qualname, wrapped)


def _modules(value: Value) -> Iterator[tuple[ast.AST, InstanceV]]:
    """The first instance of each class among the options of `value`."""
    seen: set[ast.AST] = set()
    for option in options(value):
        if isinstance(option, InstanceV) and option.cls.node not in seen:
            seen.add(option.cls.node)
            yield option.cls.node, option


def _called(qualname: str) -> str:
    """How a call of `qualname` is indexed (`nn.scan(...)`: `scan`)."""
    return qualname.rsplit(".", 1)[-1]


def _applying(visit: Visit) -> ast.Call | None:
    """`Cls(...)(x)`: the call applying what `visit`'s call builds. `library.linen.applying`'s
    answer, read from the call the walker found around it instead of walking the statement (a
    statement can be a whole `if`, and every built module of every class asked it)."""
    parent = visit.parent
    return parent if parent is not None and parent.func is visit.call else None


def _called_from(visit: Visit, where: str) -> Context:
    return replace(visit.context, call_site=where)
