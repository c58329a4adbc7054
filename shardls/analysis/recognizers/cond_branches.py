"""Functions run as a branch of `jax.lax.cond(pred, true_fun, false_fun, *operands)` or
`jax.lax.switch(index, [f, g], *operands)`.

A branch function is often called nowhere else (gemma4's and gpt_oss's `sample_multinomial`,
nested in `sample_top` and handed to `lax.cond` with the logits), so its body was walked with
unknown parameters: its `reshard` and its `jax.shard_map(sample, ...)(key, logits)` had no shape.
JAX traces every branch with the operands, so the body runs once per such call with its parameters
bound to them, traced (as under `jit`), inside `jit` only when the call is; a nested branch reads
its enclosing call's arguments too (`temp`). A branch also called directly is walked for those
calls too. The call's value is `library/conditionals.py`'s.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import replace

from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.evaluator import Frame
from shardls.analysis.library.conditionals import COND, SWITCH, branch_functions, operands
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.recognizers.transformed_calls import with_closure
from shardls.analysis.values import FunctionV, Ref, Value, options
from shardls.analysis.walker import MAX_CONTEXTS, Context, Visit, Walker, body_contexts
from shardls.analysis.walking.caller_contexts import caller_contexts
from shardls.analysis.walking.control_flow import blocks_of, own_expressions

_CALLEES = ("cond", "switch")
"""How the calls are written (`jax.lax.cond(...)`, `lax.switch(...)`)."""
_QUALNAMES = (COND, SWITCH)
_NAME = re.compile(r"[A-Za-z_]\w*")


@body_contexts(rank=2)  # the branches of lax.cond/switch: the call's operands
def branch_bodies(
    walker: Walker, info: FunctionInfo, frame: Frame, context: Context, depth: int
) -> list[tuple[dict[str, Value], Context]]:
    """One context per `cond`/`switch` call that may run the function, with its operands bound.
    A branch nested in a function is handed to a call in that function's own statements, read
    in `frame` (the enclosing call's): searching the module's calls of `cond` instead walked
    every function that makes one, in each of its contexts (nemotron3's attention and Mamba
    blocks, for each nested branch). A module-level branch is found by that search."""
    if not any(info.name in _names_near(walker.module, callee) for callee in _CALLEES):
        return []  # most functions: no segment that calls `cond` or `switch` names them
    if frame.scope.function is not None:
        calls = _nested_calls(info, frame, context)
    else:
        calls = [(visit.call, visit.frame, visit.context) for visit in _searched_calls(walker, info, depth)]
    found: list[tuple[dict[str, Value], Context]] = []
    evaluator = walker.evaluator
    for call, where_frame, where_context in calls:
        qualname = _qualname(walker, call, where_frame)
        if qualname is None:
            continue
        args, kwargs = evaluator.call_arguments(call, where_frame)
        arguments = operands(qualname, args, kwargs)
        if arguments is None or not _runs(branch_functions(qualname, args, kwargs), info):
            continue
        locals_ = evaluator.bind_arguments(info, list(arguments), {}, None, where_frame)
        where = f"{ast.unparse(call.func)}(..., {info.name}, ...) at line {where_frame.line_of(call) + 1}"
        found.append((locals_, replace(where_context, call_site=where, traced=True)))
    if not found:
        return []
    # A provider's contexts replace the plain calls': a branch also called directly keeps those.
    plain = caller_contexts(walker, info, depth)
    return with_closure(found[:MAX_CONTEXTS], info, frame) + plain[: max(0, MAX_CONTEXTS - len(found))]


def _nested_calls(
    info: FunctionInfo, frame: Frame, context: Context
) -> list[tuple[ast.Call, Frame, Context]]:
    """The `cond`/`switch` calls naming the function in the statements of the function it is
    defined in (not in functions nested there), each with the frame at its statement."""
    enclosing = frame.scope.function
    assert enclosing is not None
    found: list[tuple[ast.Call, Frame, Context]] = []
    for statement in _statements(enclosing.node.body):
        for call in _calls_in(_own(statement)):
            if _names_branch(call, info.name):
                found.append((call, frame.at(frame.scope.order_of.get(id(statement))), context))
    return found


def _own(statement: ast.stmt) -> list[ast.AST]:
    """What the statement evaluates itself: a `with`'s items, no definition's body."""
    if isinstance(statement, ast.With | ast.AsyncWith):
        return [item.context_expr for item in statement.items]
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return []
    return own_expressions(statement)


def _calls_in(nodes: list[ast.AST]) -> Iterator[ast.Call]:
    """The calls in these expressions, not in the lambdas written there (they run elsewhere)."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Call):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a block at any depth, not inside a nested `def` or `class`."""
    for statement in body:
        yield statement
        blocks = [statement.body] if isinstance(statement, ast.With | ast.AsyncWith) else blocks_of(statement)
        for block in blocks:
            yield from _statements(block)


def _names_branch(call: ast.Call, name: str) -> bool:
    """Whether the call is written `...cond(p, name, ...)`, `...cond(p, f, name, ...)` or
    `...switch(i, [..., name, ...], ...)` (the syntax only: what it calls is evaluated after)."""
    callee = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    if callee == "cond":
        written = call.args[1:3]
    elif callee == "switch" and len(call.args) > 1 and isinstance(call.args[1], ast.List | ast.Tuple):
        written = list(call.args[1].elts)
    else:
        return False
    return any(isinstance(node, ast.Name) and node.id == name for node in written)


def _searched_calls(walker: Walker, info: FunctionInfo, depth: int) -> Iterator[Visit]:
    for callee in _CALLEES:
        yield from (v for v in walker.calls_named(callee, depth) if _names_branch(v.call, info.name))


def _names_near(module: ModuleInfo, callee: str) -> frozenset[str]:
    """Every name written in the segments that call `callee`: a function named in none of them is
    no branch of such a call (one scan per module and callee, not one per function asked about)."""
    key = ("names near", callee)
    found = module.searches.get(key)
    if found is None:
        segments = module.source.segments
        found = module.searches[key] = frozenset(
            name for i in module.call_index.get(callee, ()) for name in _NAME.findall(segments[i].text)
        )
    return found


def _qualname(walker: Walker, call: ast.Call, frame: Frame) -> str | None:
    """`jax.lax.cond` or `jax.lax.switch`, when the call calls one of them."""
    func = walker.evaluator.evaluate(call.func, frame)
    return next((o.qualname for o in options(func) if isinstance(o, Ref) and o.qualname in _QUALNAMES), None)


def _runs(functions: list[Value], info: FunctionInfo) -> bool:
    return any(
        isinstance(option, FunctionV) and option.func.node is info.node
        for function in functions
        for option in options(function)
    )
