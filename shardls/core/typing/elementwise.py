"""Elementwise operations and NumPy broadcasting: `+ - * /`, comparisons, `jnp.maximum`,
`jnp.where`, unary math, `jax.nn` activations, `astype`.

jnp first promotes dtypes (`convert_element_type`, which keeps the sharding), then ranks
(`lax.broadcast_to_rank`: new leading dimensions are unsharded), then the lax primitive applies
`broadcasting_sharding_rule`: per dimension, the one sharding all operands agree on, ignoring
size-1 unsharded dimensions; two different shardings are an error.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from shardls.core.dtypes import DType
from shardls.core.typing.errors import NOT_IMPLEMENTED, SHARDING_TYPE_ERROR, VALUE_ERROR, ShapeError, reject
from shardls.core.typing.promotion import BOOL, FLOAT32, INT32, is_inexact, result_type
from shardls.core.typing.results import check_legal, result, short
from shardls.core.typing.types import DimAxes, ShardedType, SpecAxes


class Unreduced(enum.Enum):
    """Which unreduced rule the primitive has (`ur_rule=` in lax.py)."""

    ADD = "add"
    MUL = "mul"
    NONE = "none"
    """No rule for unreduced inputs: NotImplementedError; reduced inputs are checked."""


class Result(enum.Enum):
    SAME = "same"
    INEXACT = "inexact"
    """`promote_args_inexact`: integers become the default float."""
    BOOL = "bool"


_BINARY: dict[str, tuple[str, Result, Unreduced]] = {
    "add": ("add", Result.SAME, Unreduced.ADD),
    "subtract": ("sub", Result.SAME, Unreduced.NONE),
    "multiply": ("mul", Result.SAME, Unreduced.MUL),
    "divide": ("div", Result.INEXACT, Unreduced.NONE),
    "maximum": ("max", Result.SAME, Unreduced.NONE),
    "minimum": ("min", Result.SAME, Unreduced.NONE),
    "greater": ("gt", Result.BOOL, Unreduced.NONE),
    "less": ("lt", Result.BOOL, Unreduced.NONE),
    "equal": ("eq", Result.BOOL, Unreduced.NONE),
    "not_equal": ("ne", Result.BOOL, Unreduced.NONE),
}
BINARY_OPS = tuple(_BINARY)

_UNARY: dict[str, tuple[str, Result]] = {
    "exp": ("exp", Result.INEXACT),
    "log": ("log", Result.INEXACT),
    "tanh": ("tanh", Result.INEXACT),
    "sin": ("sin", Result.INEXACT),
    "sqrt": ("sqrt", Result.INEXACT),
    "sigmoid": ("logistic", Result.INEXACT),
    "negative": ("neg", Result.SAME),
    "abs": ("abs", Result.SAME),
    "square": ("square", Result.SAME),
}
UNARY_OPS = tuple(_UNARY)


def scalar(like: ShardedType, dtype: DType) -> ShardedType:
    """A Python scalar as jnp sees it: rank 0, weakly typed."""
    return ShardedType((), dtype, like.mesh, (), weak_type=True)


def convert(x: ShardedType, dtype: DType, weak_type: bool = False) -> ShardedType:
    """`lax.convert_element_type`: sharding, unreduced and reduced axes are kept."""
    return ShardedType(x.shape, dtype, x.mesh, x.spec, x.unreduced, x.reduced, weak_type)


def promote_dtypes(operands: Sequence[ShardedType], kind: Result = Result.SAME) -> list[ShardedType]:
    dtype, weak = result_type(*((t.dtype, t.weak_type) for t in operands))
    if kind is Result.INEXACT and not is_inexact(dtype):
        dtype = FLOAT32
    return [convert(t, dtype, weak) for t in operands]


def broadcast_to_rank(x: ShardedType, rank: int) -> ShardedType:
    """`lax.broadcast_to_rank`: leading size-1 dimensions, unsharded (a broadcast_in_dim, which
    has no rule for unreduced or reduced operands)."""
    if x.rank == rank:
        return x
    if x.unreduced or x.reduced:
        raise _not_implemented("broadcast_in_dim")
    lead = rank - x.rank
    return x.with_spec(((),) * lead + x.spec, shape=(1,) * lead + x.shape)


def promote_shapes(operands: Sequence[ShardedType]) -> list[ShardedType]:
    """`jnp` rank promotion: only when two non-scalar ranks differ (scalars broadcast in lax)."""
    ranks = {t.rank for t in operands if t.rank}
    if len(ranks) < 2:
        return list(operands)
    rank = max(ranks)
    return [broadcast_to_rank(t, rank) for t in operands]


def broadcast_shape(name: str, shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """`_try_broadcast_shapes` for operands of equal rank."""
    out = []
    for sizes in zip(*shapes, strict=True):
        big = {n for n in sizes if n != 1}
        if len(big) > 1:
            raise ShapeError(
                f"{name} got incompatible shapes for broadcasting: {', '.join(map(str, shapes))}."
            )
        out.append(big.pop() if big else 1)
    return tuple(out)


def broadcast_spec(name: str, operands: Sequence[ShardedType]) -> SpecAxes:
    """`broadcasting_sharding_rule` over the non-scalar operands (all of one rank)."""
    ranked = [t for t in operands if t.rank]
    if not ranked:
        return ()
    out: list[DimAxes] = []
    for dim in range(ranked[0].rank):
        entries = [t.spec[dim] for t in ranked]
        if all(e == entries[0] for e in entries):
            out.append(entries[0])
            continue
        nontrivial = [t.spec[dim] for t in ranked if not (t.shape[dim] == 1 and not t.spec[dim])]
        if not nontrivial:
            out.append(())
        elif all(e == nontrivial[0] for e in nontrivial):
            out.append(nontrivial[0])
        else:
            chosen: DimAxes = ()
            for e in entries:
                if not chosen and e:
                    chosen = e
                elif chosen and e and chosen != e:
                    specs = ", ".join(str(_partitions(t.spec)) for t in ranked)
                    raise reject(
                        "SH304",
                        f"{name} got incompatible shardings for broadcasting: {specs}.",
                        SHARDING_TYPE_ERROR,
                        dim=dim,
                    )
            out.append(chosen)
    return tuple(out)


def _partitions(spec: SpecAxes) -> tuple[object, ...]:
    """A spec as JAX prints `spec.partitions`: None, 'X' or ('X', 'Y') per dimension."""
    return tuple(None if not axes else axes[0] if len(axes) == 1 else axes for axes in spec)


def partitions_text(spec: SpecAxes) -> str:
    return str(_partitions(spec))


def _not_implemented(primitive: str) -> Exception:
    return reject(
        "SH312",
        f"unreduced rule for {primitive} is not implemented. Please file an issue at "
        "https://github.com/jax-ml/jax/issues",
        NOT_IMPLEMENTED,
        primitive=primitive,
    )


def not_implemented_for_unreduced(primitive: str, *operands: ShardedType, reduced_too: bool = True) -> None:
    """`call_ur_rule` of a primitive without an unreduced/reduced rule."""
    if any(t.unreduced or (reduced_too and t.reduced) for t in operands):
        raise _not_implemented(primitive)


def reduced_of(primitive: str, operands: Sequence[ShardedType]) -> frozenset[str]:
    """`default_nary_reduced_rule`: every reduced operand agrees, and no other operand is
    replicated (or sharded) over the axes another is reduced on."""
    reduced_sets = {t.reduced for t in operands if t.reduced}
    if len(reduced_sets) > 1:
        raise reject(
            "SH311",
            f"All inputs should be reduced across the same mesh axes. Got specs: {reduced_sets}",
            primitive=primitive,
        )
    if not reduced_sets:
        return frozenset()
    (reduced,) = reduced_sets
    for t in operands:
        if not t.rank:
            continue  # scalars pass (JAX 0.10 checks arrays only)
        sharded = {a for axes in t.spec for a in axes}
        replicated = set(t.mesh.axis_names) - sharded - t.unreduced - t.reduced
        if replicated & reduced:
            raise reject(
                "SH311",
                "Inputs cannot be replicated on the same axes that another input is reduced on. "
                f"Got input type: {short(t)} and reduced spec: {set(reduced)}",
                primitive=primitive,
            )
        if sharded & reduced:
            raise reject(
                "SH311",
                "Inputs cannot be sharded/varying on the same axes that another input is reduced on. "
                "Reshard the input which is reduced to be sharded on the mesh axes it is reduced on via "
                f"`jax.sharding.reshard(inp, jax.P(...))`. Got input type: {short(t)} and reduced spec: "
                f"{set(reduced)}",
                primitive=primitive,
            )
    return reduced


def _unreduced_of(
    primitive: str, rule: Unreduced, x: ShardedType, y: ShardedType, reduced: frozenset[str]
) -> tuple[frozenset[str], frozenset[str]]:
    xu, yu = x.unreduced, y.unreduced
    if rule is Unreduced.NONE:
        if xu or yu:
            raise _not_implemented(primitive)
        return frozenset(), reduced
    if rule is Unreduced.ADD:
        if xu and yu and xu != yu:
            raise reject(
                "SH311",
                f"lhs and rhs to `add` must be unreduced along the same mesh axes. Got lhs={set(xu)}, rhs={set(yu)}",
            )
        if bool(xu) != bool(yu):
            lhs, rhs = ("lhs", "rhs") if xu else ("rhs", "lhs")
            raise reject(
                "SH311",
                f"{lhs} is unreduced while {rhs} is not. `add` operation does not allow this because there "
                f"will be implicit communication. Please reduce {lhs} via `reshard` before calling `add`.",
            )
        return xu, reduced
    if xu and yu:
        raise reject(
            "SH311",
            f"lhs and rhs to `mul` cannot be unreduced since mul is bilinear. Got lhs={set(xu)}, rhs={set(yu)}",
        )
    if xu and xu != y.reduced:
        raise reject(
            "SH311",
            f"RHS should be reduced along the same axes LHS is unreduced on. Got lhs={short(x)} and rhs={short(y)}",
        )
    if yu and x.reduced != yu:
        raise reject(
            "SH311",
            f"LHS should be reduced along the same axes RHS is unreduced on. Got lhs={short(x)} and rhs={short(y)}",
        )
    unreduced = xu or yu
    return unreduced, frozenset() if unreduced else reduced


def binary(op: str, x: ShardedType, y: ShardedType) -> ShardedType:
    """`jnp.<op>(x, y)` (and the operators `+ - * / > < ==`); a Python scalar is `scalar(...)`."""
    primitive, kind, rule = _BINARY[op]
    x, y = promote_dtypes((x, y), Result.INEXACT if kind is Result.INEXACT else Result.SAME)
    x, y = promote_shapes((x, y))
    return _nary(primitive, (x, y), kind, rule)


def _nary(primitive: str, operands: Sequence[ShardedType], kind: Result, rule: Unreduced) -> ShardedType:
    ranked = [t for t in operands if t.rank]

    shape = broadcast_shape(primitive, [t.shape for t in ranked]) if ranked else ()
    spec = broadcast_spec(primitive, operands)
    x, y = operands
    dtype = BOOL if kind is Result.BOOL else x.dtype
    check_legal(primitive, operands, shape, dtype, spec)
    reduced = reduced_of(primitive, operands)
    unreduced, reduced = _unreduced_of(primitive, rule, x, y, reduced)
    weak = x.weak_type and y.weak_type
    return result(
        primitive, operands, shape, dtype, spec, unreduced=unreduced, reduced=reduced, weak_type=weak
    )


def unary(op: str, x: ShardedType) -> ShardedType:
    """`jnp.<op>(x)` / `jax.nn.sigmoid`: the sharding is the operand's (`unop`), and an unreduced
    operand has no rule."""
    primitive, kind = _UNARY[op]
    if op == "sigmoid" and not is_inexact(x.dtype):
        raise ShapeError(
            f"logistic does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes of floating, complexfloating."
        )
    if op == "negative" and x.dtype == BOOL:
        raise ShapeError(
            "neg does not accept dtype bool. Accepted dtypes are subtypes of integer, floating, complexfloating."
        )
    if op == "square" and x.dtype == BOOL:
        x = convert(x, INT32)  # jnp.square multiplies in int32
    if kind is Result.INEXACT and not is_inexact(x.dtype):
        # `promote_dtypes_inexact`: a weak integer stays weak as a float; bool has no weak kind.
        x = convert(x, FLOAT32, x.weak_type and x.dtype != BOOL)
    if x.unreduced:
        raise _not_implemented(primitive)
    return ShardedType(x.shape, x.dtype, x.mesh, x.spec, frozenset(), x.reduced, x.weak_type)


def relu(x: ShardedType) -> ShardedType:
    """`jax.nn.relu(x)` is `jnp.maximum(x, 0)`."""
    return binary("maximum", x, scalar(x, INT32))


def where(condition: ShardedType, x: ShardedType, y: ShardedType) -> ShardedType:
    """`jnp.where(c, x, y)`: dtypes promoted, all three broadcast to one shape and sharding
    (`lax.broadcast_shardings`), then `lax.select`, whose cases must be sharded alike."""
    if condition.dtype != BOOL:
        condition = binary("not_equal", condition, scalar(condition, condition.dtype))
    x, y = promote_dtypes((x, y))
    operands = [x, y] if condition.rank == 0 else [condition, x, y]
    if not all(t.shape == operands[0].shape for t in operands):
        shape, spec = broadcast_shardings(operands)
        operands = [broadcast_to(t, shape, spec) for t in operands]
    if condition.rank:
        condition, x, y = operands
    else:
        x, y = operands
    if 0 in x.shape:
        return x  # jnp.where skips the select of an empty result (`is_always_empty`)
    return select(condition, x, y)


def broadcast_shardings(operands: Sequence[ShardedType]) -> tuple[tuple[int, ...], SpecAxes]:
    """`lax.broadcast_shapes` and `lax.broadcast_shardings`: the one shape and sharding that
    `jnp.where`'s operands (and an index's integer arrays) are broadcast to."""
    rank = max(t.rank for t in operands)
    padded = [
        t.with_spec(((),) * (rank - t.rank) + t.spec, shape=(1,) * (rank - t.rank) + t.shape)
        for t in operands
    ]
    shape = broadcast_shape("broadcast_shapes", [t.shape for t in padded])
    widest = max(operands, key=lambda t: t.rank)
    if all(widest.spec[rank - t.rank :] == t.spec for t in operands):
        return shape, widest.spec
    return shape, broadcast_spec("broadcast_shardings", padded)


def broadcast_to(x: ShardedType, shape: tuple[int, ...], spec: SpecAxes | None = None) -> ShardedType:
    """`lax.broadcast_to(x, shape, sharding)`: new leading dimensions; size-1 dimensions grow.

    Without `spec` the result keeps the operand's sharding (leading dimensions unsharded)."""
    if x.shape == shape and (spec is None or spec == x.spec):
        return x
    lead = len(shape) - x.rank
    fits = lead >= 0 and all(n in (1, m) for n, m in zip(x.shape, shape[lead:], strict=False))
    if spec is not None:
        fits = fits and all(not a or a == b for a, b in zip(x.spec, spec[lead:], strict=False))
    if not fits:
        raise ShapeError(
            f"Incompatible types for broadcasting: input type={short(x)} and requested shape={shape}",
            VALUE_ERROR,
        )
    not_implemented_for_unreduced("broadcast_in_dim", x)
    out_spec = ((),) * lead + x.spec if spec is None else spec
    return result("broadcast_in_dim", [x], shape, x.dtype, out_spec, weak_type=x.weak_type)


def select(which: ShardedType, x: ShardedType, y: ShardedType) -> ShardedType:
    """`lax.select(which, x, y)`: the cases share one sharding; a non-scalar `which` too."""
    if x.spec != y.spec or x.unreduced != y.unreduced or x.reduced != y.reduced:
        raise reject(
            "SH306",
            f"select cases must have the same shardings, got [{short(x)}, {short(y)}].",
            operation="select",
        )
    if which.rank and which.spec != x.spec:
        raise reject(
            "SH306",
            f"select `which` must be scalar or have the same sharding as cases, got `which` sharding "
            f"{short(which)} but case sharding {short(x)}.",
            operation="select",
        )
    return ShardedType(x.shape, x.dtype, x.mesh, x.spec, x.unreduced, x.reduced, x.weak_type and y.weak_type)
