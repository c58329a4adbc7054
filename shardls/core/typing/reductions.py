"""Reductions: `sum`/`mean`/`max`/`min`/`prod`/`argmax`/`argmin` over axes (with `keepdims`), and
the cumulative ones (`cumsum`, `cumprod`, `cummax`, `cummin`).

A reduction drops the reduced dimensions' entries from the spec (`_reduce_sum_sharding_rule`):
reducing a sharded dimension is fine, XLA inserts the all-reduce. A cumulative reduction scans
along its axis and JAX requires that axis unsharded (`_cumred_sharding_rule`).
`keepdims` puts unsharded size-1 dimensions back (`lax.expand_dims`).
"""

from __future__ import annotations

from collections.abc import Sequence

from shardls.core.dtypes import DType
from shardls.core.typing.elementwise import convert, not_implemented_for_unreduced, reduced_of
from shardls.core.typing.errors import NOT_IMPLEMENTED, VALUE_ERROR, ShapeError, reject
from shardls.core.typing.permute import expand_dims
from shardls.core.typing.promotion import BOOL, FLOAT32, INT32, UINT32, is_inexact
from shardls.core.typing.reshape import reshape
from shardls.core.typing.types import ShardedType

Axis = int | Sequence[int] | None

_PRIMITIVES = {
    "sum": "reduce_sum",
    "mean": "reduce_sum",
    "prod": "reduce_prod",
    "max": "reduce_max",
    "min": "reduce_min",
    "any": "reduce_or",
    "all": "reduce_and",
}
REDUCTIONS = tuple(_PRIMITIVES)
CUMULATIVE = ("cumsum", "cumprod", "cummax", "cummin")


def check_axes(x: ShardedType, axis: Axis) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(x.rank))
    wanted = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in wanted:
        if not -x.rank <= a < x.rank:
            raise ShapeError(f"axis {a} is out of bounds for array of dimension {x.rank}", VALUE_ERROR)
        out.append(a % x.rank)
    if len(set(out)) != len(out):
        raise ShapeError(f"duplicate value in 'axis': {wanted}", VALUE_ERROR)
    return tuple(out)


def _promote_integer(dtype: DType) -> DType:
    """`_promote_integer_dtype`: sums of narrow integers (and bools) accumulate in 32 bits."""
    if dtype.name == "bool" or (dtype.name.startswith("int") and dtype.bits < 32):
        return INT32
    if dtype.name.startswith("uint") and dtype.bits < 32:
        return UINT32
    return dtype


def _drop(x: ShardedType, axes: tuple[int, ...], dtype: DType) -> ShardedType:
    keep = [i for i in range(x.rank) if i not in axes]
    return ShardedType(
        tuple(x.shape[i] for i in keep), dtype, x.mesh, tuple(x.spec[i] for i in keep), x.unreduced, x.reduced
    )


def reduce_generic(x: ShardedType, axes: tuple[int, ...]) -> ShardedType:
    """`lax.reduce` with a summing computation (what einsum uses): no unreduced/reduced rule."""
    not_implemented_for_unreduced("reduce", x)
    return _drop(x, axes, x.dtype)


def reduce(op: str, x: ShardedType, axis: Axis = None, *, keepdims: bool = False) -> ShardedType:
    """`jnp.<op>(x, axis=..., keepdims=...)` for op in REDUCTIONS."""
    axes = check_axes(x, axis)
    primitive = _PRIMITIVES[op]
    if op in ("max", "min") and any(x.shape[d] == 0 for d in axes):
        raise ShapeError(f"zero-size array to reduction operation {op} which has no identity", VALUE_ERROR)
    if op in ("any", "all"):
        dtype = BOOL
    elif op in ("sum", "prod"):
        dtype = _promote_integer(x.dtype)
    elif op == "mean":
        dtype = x.dtype if is_inexact(x.dtype) else FLOAT32
    else:
        dtype = x.dtype
    operand = convert(x, dtype)
    if primitive != "reduce_sum":
        _dangerous(operand, "*pspec")
        not_implemented_for_unreduced(primitive, operand)
    out = _drop(operand, axes, dtype)
    if keepdims:
        out = expand_dims(out, axes, keeps_unreduced=True)
    if op == "mean":
        normalizer = ShardedType((), dtype, out.mesh, ())
        reduced = reduced_of("div", (out, normalizer))
        if out.unreduced:
            raise reject(
                "SH312",
                "unreduced rule for div is not implemented. Please file an issue at https://github.com/jax-ml/jax/issues",
                NOT_IMPLEMENTED,
                primitive="div",
            )
        out = ShardedType(out.shape, dtype, out.mesh, out.spec, frozenset(), reduced)
    return out


def arg_reduce(op: str, x: ShardedType, axis: int | None = None, *, keepdims: bool = False) -> ShardedType:
    """`jnp.argmax`/`jnp.argmin`: int32 indices; `axis=None` flattens first (a reshape)."""
    operand = x
    if axis is None:
        operand = reshape(x, (x.size,))
        (dim,) = check_axes(operand, 0)
    else:
        (dim,) = check_axes(x, axis)
    if operand.shape[dim] == 0:
        raise ShapeError("argmin and argmax require non-empty reduced dimension.", VALUE_ERROR)
    not_implemented_for_unreduced(op, operand)
    out = _drop(operand, (dim,), INT32)
    if keepdims:
        out = expand_dims(out, tuple(range(x.rank)) if axis is None else (dim,))
    return out


def cumulative(op: str, x: ShardedType, axis: int | None = None) -> ShardedType:
    """`jnp.cumsum(x, axis)` and friends: the scanned axis must be unsharded; `axis=None` needs
    the whole array replicated (it is flattened first)."""
    if axis is None or x.rank == 0:
        if x.unreduced or x.reduced:
            raise ShapeError(
                "Using *pspec is dangerous when PartitionSpec has non-empty unreduced/reduced set. "
                "Please use *spec.partitions",
                VALUE_ERROR,
            )
        if any(x.spec):
            raise reject(
                "SH309",
                "The input should be fully replicated when axis is not specified to "
                f"{op}. Got input type={x.jax_type}",
                operation=op,
            )
        x = reshape(x, (x.size,))
        axis = 0
    (dim,) = check_axes(x, axis)
    dtype = _promote_integer(x.dtype) if op in ("cumsum", "cumprod") else x.dtype
    operand = convert(x, dtype)
    _dangerous(operand, "pspec[...]")
    if operand.spec[dim]:
        raise reject(
            "SH309",
            f"Input should be unsharded over the axis being reduced. Got input type={operand.jax_type} and axis={dim}",
            operation=op,
            dim=dim,
        )
    not_implemented_for_unreduced(op, operand)
    return operand


def _dangerous(x: ShardedType, how: str) -> None:
    """Rules that read a PartitionSpec positionally refuse one with unreduced/reduced axes (a
    ValueError from `PartitionSpec.__iter__`/`__getitem__`) before any unreduced rule runs."""
    if x.unreduced or x.reduced:
        fix = "*spec.partitions" if how == "*pspec" else "spec.partitions[...]"
        raise ShapeError(
            f"Using {how} is dangerous when PartitionSpec has non-empty unreduced/reduced set. Please use {fix}",
            VALUE_ERROR,
        )
