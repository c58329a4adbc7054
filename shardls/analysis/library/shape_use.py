"""The rank of an array read from how the code uses it: of a parameter nobody passes, and of any
local below a statement that fixes it.

Most real layout sites live in helpers whose arrays are parameters (`def shard(x, mesh): ...`).
When the body unpacks the whole shape, `b, s, d = x.shape`, Python itself guarantees the rank:
any other rank raises before the layout is decided. So `x` is an array of rank 3 whose sizes are
the names the code gives them, and its layout renders as `[b/|data|, s, d/|model|]`. An
`assert x.ndim == 3` (or `len(x.shape) == 3`, alone or joined to other tests by `and`) at the
top of the body says the same about the rank (sizes `x.shape[0]`, ...); so does an unpacking
nested in a tuple's, `(b, s, d), e = x.shape, n`. Nothing weaker counts (`x.shape[0]`, `b, *rest
= x.shape`, an `if x.ndim == 3:` branch, an `or`): the rank stays unknown.

Below such a statement, anywhere in a function or module (`_, _, kh, _ = key_proj.shape` after
`key_proj = self.k_proj(x)`), the name holds an array of that rank whatever it held before: the
scope binds it again there (a `rank` binding, `with_fixed_rank`). That is certain once the line
has run, so an unpacking's rank is a fact; an `assert` is one only while asserts run (`python -O`
drops them), so the rank it gives is an assumption, named on its sizes.
"""

from __future__ import annotations

import ast

from shardls.analysis.rank_statements import asserted_ranks, unpacked_shapes
from shardls.analysis.scopes import Binding, Scope
from shardls.analysis.values import ArrayV, Origin, Unknown


def unpacked_parameter(scope: Scope, name: str) -> ArrayV | None:
    """`name`, a parameter of the function of `scope`, as an array of the rank its body unpacks
    (`b, s, d = name.shape`), each size named after its target; None when nothing fixes the rank,
    when the parameter is bound again in the body, or when two unpackings disagree."""
    function = scope.function
    bindings = scope.bindings.get(name, ())
    if function is None or any(binding.kind not in ("param", "rank") for binding in bindings):
        return None
    body = {id(statement) for statement in function.node.body}
    found = {
        _unpacked(binding, name)
        for bindings in scope.bindings.values()
        for binding in bindings
        if id(binding.node) in body
    }
    found |= _asserted(scope, name)
    targets = [target for target in found if target is not None]
    if len({len(names) for _, names in targets}) != 1:
        return None
    line, names = max(targets, key=lambda target: sum(n is not None for n in target[1]))
    # Certain where that line has run; a site above it (or after an early return) may see
    # another rank, so what the rank decides (SH002) is at most a warning.
    origin = Origin(
        f"rank of {name} from line {line + 1}",
        line=line,
        assumption=f"`{name}` has rank {len(names)} as line {line + 1} requires",
    )
    return ArrayV(
        tuple(
            Unknown(
                f"size {index} of {name}.shape (its rank is fixed at line {line + 1})",
                symbol=target if target is not None else f"{name}.shape[{index}]",
                origin=origin,
            )
            for index, target in enumerate(names)
        )
    )


def _asserted(scope: Scope, name: str) -> set[tuple[int, tuple[str | None, ...]] | None]:
    """`(line, unnamed sizes)` for each `assert name.ndim == N` / `assert len(name.shape) == N`
    (alone or among the operands of an `and`) among the function body's own statements."""
    function = scope.function
    if function is None:
        return set()
    found: set[tuple[int, tuple[str | None, ...]] | None] = set()
    for statement in function.node.body:
        if not isinstance(statement, ast.Assert):
            continue
        rank = asserted_ranks(statement.test).get(name)
        if rank is not None:
            found.add((function.segment.abs_line(statement.lineno), (None,) * rank))
    return found


def _unpacked(binding: Binding, name: str) -> tuple[int, tuple[str | None, ...]] | None:
    """`(line, target names)` when the binding is one target of `a, b = name.shape` (or of such
    an unpacking nested in a tuple's, `(b, s, d), e = name.shape, n`), a statement of the
    function body itself, not inside a branch or loop."""
    statement = binding.node
    if binding.kind != "assign" or not isinstance(statement, ast.Assign):
        return None
    names = unpacked_shapes(statement).get(name)
    return None if names is None else (binding.line, names)
