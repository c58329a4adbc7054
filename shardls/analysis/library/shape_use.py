"""The rank of a parameter nobody passes, read from how the function uses it.

Most real layout sites live in helpers whose arrays are parameters (`def shard(x, mesh): ...`).
When the body unpacks the whole shape, `b, s, d = x.shape`, Python itself guarantees the rank:
any other rank raises before the layout is decided. So `x` is an array of rank 3 whose sizes are
the names the code gives them, and its layout renders as `[b/|data|, s, d/|model|]`. Nothing
weaker counts (`x.shape[0]`, `b, *rest = x.shape`, `x.ndim` tests): the rank stays unknown.
"""

from __future__ import annotations

import ast

from shardls.analysis.scopes import Binding, Scope
from shardls.analysis.values import ArrayV, Unknown


def unpacked_parameter(scope: Scope, name: str) -> ArrayV | None:
    """`name`, a parameter of the function of `scope`, as an array of the rank its body unpacks
    (`b, s, d = name.shape`), each size named after its target; None when nothing fixes the rank,
    when the parameter is bound again in the body, or when two unpackings disagree."""
    if any(binding.kind != "param" for binding in scope.bindings.get(name, ())):
        return None
    found = {_unpacked(binding, name) for bindings in scope.bindings.values() for binding in bindings}
    targets = [target for target in found if target is not None]
    if len(targets) != 1:
        return None
    line, names = targets[0]
    return ArrayV(
        tuple(
            Unknown(
                f"size {index} of {name}.shape (unpacked at line {line + 1})",
                symbol=target if target is not None else f"{name}.shape[{index}]",
            )
            for index, target in enumerate(names)
        )
    )


def _unpacked(binding: Binding, name: str) -> tuple[int, tuple[str | None, ...]] | None:
    """`(line, target names)` when the binding is one target of `a, b = name.shape`."""
    statement = binding.node
    if binding.kind != "assign" or not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    target, value = statement.targets[0], statement.value
    if not (
        isinstance(target, ast.Tuple | ast.List)
        and isinstance(value, ast.Attribute)
        and value.attr == "shape"
        and isinstance(value.value, ast.Name)
        and value.value.id == name
    ):
        return None
    if any(isinstance(element, ast.Starred) for element in target.elts):
        return None
    names = tuple(
        element.id if isinstance(element, ast.Name) and element.id != "_" else None for element in target.elts
    )
    return binding.line, names
