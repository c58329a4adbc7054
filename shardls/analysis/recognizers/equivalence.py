"""The rank a sharding is compared at: `x.sharding.is_equivalent_to(NamedSharding(mesh, P(...)),
ndim=2)`.

Flax's and MaxText's tests check a layout by comparing shardings, not by placing an array: the
`NamedSharding` built as the argument of `is_equivalent_to` has no array of its own. JAX compares
the two shardings as laid on an array of rank `ndim` (`_to_xla_hlo_sharding(ndim)`; a spec with
more entries than that raises an IndexError), so the code states the rank the sharding is used
at, never its sizes: the site gets that rank with sizes not known here (`d0`, `d1`), and the
per-device shape is a formula (`d0/|row|`). Nothing else is read from it: no size, so no
divisibility to check, and no diagnostic. A rank the code does not give as a number (`v.ndim` of
an array not known here) leaves the site as it was.
"""

from __future__ import annotations

import ast

from shardls.analysis.library import CallArgs
from shardls.analysis.values import Const, ShardingV, Unknown, Value
from shardls.analysis.walker import Visit


def compared_rank(visit: Visit, call: CallArgs, sharding: ShardingV) -> tuple[tuple[Value, ...], str] | None:
    """The shape (rank known, sizes unknown) of the array `sharding` is compared at, and why, when
    the call that builds it is the `other` argument of `something.is_equivalent_to(other, ndim)`
    and `ndim` is a number the spec fits in; None otherwise."""
    parent = visit.parent
    if parent is None or not isinstance(parent.func, ast.Attribute) or parent.func.attr != "is_equivalent_to":
        return None
    other = parent.args[0] if parent.args else _keyword(parent, "other")
    ndim = parent.args[1] if len(parent.args) > 1 else _keyword(parent, "ndim")
    if other is not call.node or ndim is None:
        return None
    rank = call.evaluator.evaluate(ndim, call.frame)
    if not isinstance(rank, Const) or type(rank.value) is not int:
        return None
    if not 0 <= rank.value <= 32 or len(sharding.spec.spec.entries) > rank.value:
        return None
    line = call.frame.line_of(parent) + 1
    reason = f"is_equivalent_to(..., ndim={rank.value}) at line {line}"
    shape = tuple(
        Unknown(f"size {index} of the array compared by {reason}", symbol=f"d{index}")
        for index in range(rank.value)
    )
    return shape, f"rank {rank.value} from {reason}: the rank JAX compares the sharding at"


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((keyword.value for keyword in call.keywords if keyword.arg == name), None)
