"""Placements, creations and constraints: where a typed array's sharding is first given."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from shardls.analysis.sharded.propagate import place, replicated, typed, untyped
from shardls.analysis.sharded.registry import JNP, calls
from shardls.analysis.values import ArrayV, Value

if TYPE_CHECKING:
    from shardls.analysis.library import CallArgs


@calls("jax.device_put", "jax.sharding.reshard")
def _placement(call: CallArgs, base: Value | None) -> Value | None:
    """The placed array's type (the placement's site reports a layout JAX rejects)."""
    from shardls.analysis.library.convert import sharding_of

    if not isinstance(base, ArrayV):
        return base
    sharding = sharding_of(call.get(1, "device", "shardings", "out_shardings"))
    if sharding is None:
        return untyped(base)
    name = call.qualname.rsplit(".", 1)[-1]
    source = typed(call.get(0, "x"))
    result = place(call.evaluator, call.frame, call.node, name, sharding, base, source)
    if source is None or not source.type.weak_type or result.typed is None:
        return result
    # A placement keeps the array's weak type (`reshard` and `device_put` update its sharding only).
    weak = replace(result.typed, type=replace(result.typed.type, weak_type=True))
    return replace(result, typed=weak)


@calls(
    *(JNP + n for n in ("zeros", "ones", "empty", "full", "arange", "array", "asarray")),
    *(f"jax.random.{n}" for n in ("normal", "uniform", "truncated_normal", "bernoulli", "randint")),
)
def _creation(call: CallArgs, base: Value | None) -> Value | None:
    """Made with `out_sharding=`: placed by it; made without: replicated on the context mesh
    (`jnp.asarray(x)` of a typed array is that array)."""
    from shardls.analysis.library.convert import sharding_of

    if not isinstance(base, ArrayV) or base.typed is not None:
        return base
    given = call.get(None, "out_sharding", "device", "sharding")
    name = call.qualname.rsplit(".", 1)[-1]
    if given is None:
        return replicated(call.evaluator, call.frame, call.node, name, base)
    sharding = sharding_of(given)
    if sharding is None:
        return untyped(base)
    return place(call.evaluator, call.frame, call.node, name, sharding, base, None)


@calls("jax.lax.with_sharding_constraint")
def _constraint(call: CallArgs, base: Value | None) -> Value | None:
    """On Explicit axes a constraint only asserts that the type already is what it says: the
    type goes through when it matches; a mismatch is JAX's AssertionError, not typed here."""
    from shardls.analysis.library.convert import sharding_of

    x = typed(call.get(0, "x"))
    sharding = sharding_of(call.get(1, "shardings"))
    if x is None or sharding is None or not isinstance(base, ArrayV):
        return untyped(base) if x else base
    checked = place(call.evaluator, call.frame, call.node, "with_sharding_constraint", sharding, base, x)
    if checked.typed is None or checked.typed.type != x.type:
        return untyped(base)
    return replace(base, typed=x)
