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
from dataclasses import replace

from shardls.analysis.definitions import FunctionInfo
from shardls.analysis.evaluator import Frame
from shardls.analysis.library.conditionals import COND, SWITCH, branch_functions, operands
from shardls.analysis.module_info import ModuleInfo
from shardls.analysis.recognizers.transformed_calls import with_closure
from shardls.analysis.values import FunctionV, Ref, Value, options
from shardls.analysis.walker import MAX_CONTEXTS, Context, Visit, Walker, body_contexts
from shardls.analysis.walking.caller_contexts import caller_contexts

_CALLEES = {"cond": COND, "switch": SWITCH}
"""How the calls are written (`jax.lax.cond(...)`, `lax.switch(...)`), and what they must be."""
_NAME = re.compile(r"[A-Za-z_]\w*")


@body_contexts(rank=2)  # the branches of lax.cond/switch: the call's operands
def branch_bodies(
    walker: Walker, info: FunctionInfo, frame: Frame, context: Context, depth: int
) -> list[tuple[dict[str, Value], Context]]:
    """One context per `cond`/`switch` call that may run the function, with its operands bound."""
    found: list[tuple[dict[str, Value], Context]] = []
    evaluator = walker.evaluator
    for callee, qualname in _CALLEES.items():
        if info.name not in _names_near(walker.module, callee):
            continue
        for visit in walker.calls_named(callee, depth):
            if not _calls(walker, visit, qualname):
                continue
            args, kwargs = evaluator.call_arguments(visit.call, visit.frame)
            arguments = operands(qualname, args, kwargs)
            if arguments is None or not _runs(branch_functions(qualname, args, kwargs), info):
                continue
            locals_ = evaluator.bind_arguments(info, list(arguments), {}, None, visit.frame)
            where = f"{ast.unparse(visit.call.func)}(..., {info.name}, ...) at line {visit.frame.line_of(visit.call) + 1}"
            found.append((locals_, replace(visit.context, call_site=where, traced=True)))
    if not found:
        return []
    # A provider's contexts replace the plain calls': a branch also called directly keeps those.
    plain = caller_contexts(walker, info, depth)
    return with_closure(found[:MAX_CONTEXTS], info, frame) + plain[: max(0, MAX_CONTEXTS - len(found))]


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


def _calls(walker: Walker, visit: Visit, qualname: str) -> bool:
    func = walker.evaluator.evaluate(visit.call.func, visit.frame)
    return any(isinstance(option, Ref) and option.qualname == qualname for option in options(func))


def _runs(functions: list[Value], info: FunctionInfo) -> bool:
    return any(
        isinstance(option, FunctionV) and option.func.node is info.node
        for function in functions
        for option in options(function)
    )
