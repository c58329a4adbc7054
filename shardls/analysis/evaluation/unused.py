"""Arguments nothing needs: those of a call of a library function the interpreter does not model.

Such a call's value is `Unknown` whatever its arguments are (`tqdm(tests)`, `print(...)`,
`logger.info(...)`), so evaluating them only costs: jax-llm-examples' `decode_ragged_dot.py`
files iterate `tqdm(tests)` over a test grid of 3,456 tuples, which each question reaching the
loop (the caller search of the kernel binds its parameters from it) unrolled until its step
budget ran out, until the statement's budget did too (SH214).

What an evaluation leaves besides its value must not be lost either. The reads it notes only key
the incremental cache of a result that then does not depend on them, and memos only save work;
but operations on arrays of known sharded type record events that become sites and diagnostics
(`print(x @ w)` may report the contraction JAX rejects). So the arguments are left unevaluated
only when no typed array can come of them (`quiet`): a typed array is made by a call (a
placement, a creation, a function of the workspace that makes one) or comes from a local bound
to one, so an argument qualifies when neither it nor, transitively, any binding of a name it
reads holds a call, and every name it reads is a plain local (numbers, unknowns, untyped arrays
and containers of them), a function, or bound by statements of that kind.

A site inside such an argument is not lost: the walker finds every call in the syntax and visits
it on its own (`jax.device_put(x, s)` passed to `print` is still a `device_put` site).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from shardls.analysis.scopes import Binding, Scope
from shardls.analysis.values import (
    ArrayV,
    BoundMethod,
    Choice,
    Const,
    DictV,
    DTypeV,
    FunctionV,
    MeshV,
    Ref,
    Seq,
    SetV,
    ShardingV,
    SliceV,
    SpecV,
    Unknown,
    Value,
)

if TYPE_CHECKING:
    from shardls.analysis.evaluation.frame import Frame
    from shardls.analysis.evaluator import Evaluator

_MAX_NAMES = 256
"""The most names followed through bindings for one argument; past it, the argument is evaluated."""
_MAX_DEPTH = 4
"""How deep a local's containers are searched for an array of known type."""
_CALLING = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom)


def ignored_call_reason(evaluator: Evaluator, func: Value, node: ast.Call, frame: Frame) -> str | None:
    """The reason of the `Unknown` a call gives whatever its arguments, when they need not be
    evaluated (see the module's docstring); None when they must be."""
    if isinstance(func, Ref):
        if evaluator.library.models_call(func.qualname):
            return None
        reason = f"result of {func.qualname}()"
    elif isinstance(func, BoundMethod):
        if evaluator.library.models_method(func):
            return None
        reason = f"result of .{func.name}()"
    else:
        return None
    if any(isinstance(arg, ast.Starred) for arg in node.args) or any(k.arg is None for k in node.keywords):
        return None  # `*xs` and `**kw` of unknown contents give reasons of their own
    if evaluator.typing is None:
        return reason
    expressions = [*node.args, *(k.value for k in node.keywords)]
    if all(quiet(evaluator, expression, frame) for expression in expressions):
        return reason
    return None


def quiet(evaluator: Evaluator, expression: ast.expr, frame: Frame) -> bool:
    """Whether no array of known sharded type can come of evaluating `expression` here (so no
    sharded-type event can be recorded meanwhile)."""
    if isinstance(expression, ast.Constant):
        return True
    known = evaluator.quiet_names.get((id(expression), id(frame.scope)))
    if known is None:
        names = _names_reached(expression, frame.scope)
        known = (expression, frame.scope, names)
        evaluator.quiet_names[(id(expression), id(frame.scope))] = known
    names = known[2]
    if names is None:
        return False
    locals_ = frame.locals
    for name in names:
        if name in locals_:
            if not _plain(locals_[name], 0):
                return False
        elif name in frame.scope.bindings and any(b.kind == "param" for b in frame.scope.bindings[name]):
            return False  # a parameter no call bound: its default or what its uses say
    return True


def _names_reached(expression: ast.expr, scope: Scope) -> frozenset[str] | None:
    """The names read where `expression` is evaluated (in `scope`, where the frame's locals
    answer first): those it reads and, through the bindings of `scope` that may give them their
    values, those these read. None when `expression` or any binding that may give a name read
    on the way its value (in `scope` or around it, transitively) holds a call, or is not an
    expression of the code (an import, a class, an enclosing function's parameter)."""
    read = _free_names(expression)
    if read is None:
        return None
    local: set[str] = set()
    visited: set[tuple[str, int]] = set()
    pending = [(name, scope) for name in read]
    while pending:
        name, at = pending.pop()
        if (name, id(at)) in visited:
            continue
        visited.add((name, id(at)))
        if len(visited) > _MAX_NAMES:
            return None
        if at is scope:
            local.add(name)
        for holder in _holders(name, at):
            for binding in holder.bindings[name]:
                names = _binding_reads(binding, holder is scope)
                if names is None:
                    return None
                pending.extend((other, holder) for other in names)
    return frozenset(local)


def _binding_reads(binding: Binding, in_scope: bool) -> set[str] | None:
    """What evaluating a binding reads besides its own name (see `bindings.evaluate_binding`);
    None when it may make a typed array of something else than what it reads."""
    kind = binding.kind
    if kind in ("def", "except", "annotation", "rank"):
        return set()  # a function (its body runs where it is called), no value, or the name's own
    if kind == "param":
        return set() if in_scope else None  # the frame's local (`quiet`), or a default unread here
    if kind in ("assign", "augassign", "for", "with") and binding.value is not None:
        return _free_names(binding.value)
    if kind == "setitem" and binding.target is not None and binding.value is not None:
        key, value = _free_names(binding.target.slice), _free_names(binding.value)
        return None if key is None or value is None else key | value
    return None


def _holders(name: str, scope: Scope) -> list[Scope]:
    """Every scope whose bindings a read of `name` in `scope` may find (`names.lookup` goes on
    to the enclosing scope where none of a scope's bindings reaches the read)."""
    found: list[Scope] = []
    current: Scope | None = scope
    first = True
    while current is not None:
        if (first or current.kind != "class") and name in current.bindings:
            found.append(current)
        first = False
        current = current.parent
    return found


def _free_names(expression: ast.expr) -> set[str] | None:
    """The names an expression reads from where it is evaluated (not its comprehensions' own
    variables, nor what a lambda's body reads); None when it holds a call."""
    names: set[str] = set()
    if not _collect(expression, names, frozenset()):
        return None
    return names


def _collect(node: ast.AST, names: set[str], bound: frozenset[str]) -> bool:
    if isinstance(node, _CALLING):
        return False
    if isinstance(node, ast.Name):
        if node.id not in bound:
            names.add(node.id)
        return True
    if isinstance(node, (ast.Constant, ast.Lambda)):
        return True  # a lambda's value is not evaluated (`Unknown("lambda")`)
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
        inner = bound
        for generator in node.generators:
            if not _collect(generator.iter, names, inner):
                return False
            inner = inner | _targets(generator.target)
            if not all(_collect(condition, names, inner) for condition in generator.ifs):
                return False
        parts = (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,)
        return all(_collect(part, names, inner) for part in parts)
    return all(_collect(child, names, bound) for child in ast.iter_child_nodes(node))


def _targets(target: ast.expr) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(target) if isinstance(n, ast.Name))


def _plain(value: Value, depth: int) -> bool:
    """A value no array of known sharded type can come of without a call."""
    if isinstance(value, (Const, Unknown, Ref, FunctionV, DTypeV, MeshV, SpecV, ShardingV)):
        return True
    if isinstance(value, ArrayV):
        return value.typed is None
    if depth >= _MAX_DEPTH:
        return False
    if isinstance(value, (Seq, SetV)):
        return all(_plain(item, depth + 1) for item in value.items)
    if isinstance(value, DictV):
        return all(_plain(item, depth + 1) for item in (*value.keys, *value.values))
    if isinstance(value, Choice):
        return all(_plain(option, depth + 1) for option in value.options)
    if isinstance(value, SliceV):
        return all(part is None or _plain(part, depth + 1) for part in (value.lower, value.upper, value.step))
    return False
