"""The names of the layers one call creates, which name their parameters' sites:
`self.up = nnx.Linear(...)` is `up`; layers built in a comprehension are `layers[*]` when alike and
`layers[0]`, `layers[1]`, ... (each with its own arguments) when their shapes depend on the loop."""

from __future__ import annotations

import ast
from dataclasses import replace

from shardls.analysis.library import CallArgs
from shardls.analysis.values import Seq, Value
from shardls.analysis.walker import Visit, target_name

MAX_UNROLLED = 16
"""Layers of one comprehension given their own sites when their shapes depend on the loop."""


def instances(visit: Visit, call: CallArgs) -> list[tuple[str, CallArgs]]:
    """The name of each layer this call creates, with its arguments. A call in a comprehension
    creates one layer per item: `layers[*]` when they are all alike, else `layers[0]`, `layers[1]`,
    ... with the arguments of each item (when the items can be listed)."""
    path = _path_to(visit.statement, visit.call) or []
    container = target_name(visit.statement)
    comprehension = next(
        (node for node in reversed(path) if isinstance(node, (ast.ListComp, ast.GeneratorExp))), None
    )
    if comprehension is None:
        literal = _literal_position(path)
        if visit.target is not None or container is None:
            return [(visit.target or "", call)]
        return [(f"{container}[{literal}]" if literal is not None else container, call)]
    prefix = container or ""
    loop_names = {
        n.id for g in comprehension.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)
    }
    if not any(isinstance(n, ast.Name) and n.id in loop_names for n in ast.walk(visit.call)):
        return [(f"{prefix}[*]", call)]
    bindings = _bindings(call, comprehension, sorted(loop_names))
    if bindings is None:
        return [(f"{prefix}[*]", call)]
    return [(f"{prefix}[{i}]", _reevaluated(call, locals_)) for i, locals_ in enumerate(bindings)]


def _bindings(
    call: CallArgs, comprehension: ast.ListComp | ast.GeneratorExp, names: list[str]
) -> list[dict[str, Value]] | None:
    """The loop variables of each item, by evaluating the comprehension's generators (bounded)."""
    names_node = ast.Tuple([ast.Name(n, ast.Load()) for n in names], ast.Load())
    probe = ast.copy_location(ast.ListComp(names_node, comprehension.generators), comprehension)
    items = call.evaluator.evaluate(probe, call.frame)
    if not isinstance(items, Seq) or not 0 < len(items.items) <= MAX_UNROLLED:
        return None
    return [dict(zip(names, item.items)) for item in items.items if isinstance(item, Seq)]


def _reevaluated(call: CallArgs, locals_: dict[str, Value]) -> CallArgs:
    frame = replace(call.frame, locals={**call.frame.locals, **locals_})
    evaluate = call.evaluator.evaluate
    args = [evaluate(a, frame) for a in call.node.args if not isinstance(a, ast.Starred)]
    kwargs = {k.arg: evaluate(k.value, frame) for k in call.node.keywords if k.arg is not None}
    return replace(call, args=args, kwargs=kwargs, frame=frame)


def _path_to(root: ast.AST, target: ast.AST) -> list[ast.AST] | None:
    """The nodes from `root` down to `target` (both included)."""
    if root is target:
        return [root]
    for child in ast.iter_child_nodes(root):
        below = _path_to(child, target)
        if below is not None:
            return [root, *below]
    return None


def _literal_position(path: list[ast.AST]) -> int | None:
    """`[nnx.Linear(...), nnx.Linear(...)]`: the index of the element that holds the call."""
    for parent, child in zip(path, path[1:]):
        if isinstance(parent, (ast.List, ast.Tuple)) and isinstance(child, ast.expr) and child in parent.elts:
            return parent.elts.index(child)
    return None
