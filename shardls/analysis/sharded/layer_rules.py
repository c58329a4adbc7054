"""Flax 0.12's layer computations over sharded types: what `nnx.Linear`, `nnx.LinearGeneral`,
`nnx.Einsum`, `nnx.Embed` and `nnx.LayerNorm`/`nnx.RMSNorm` do in `__call__`, written operation
by operation with the core's rules, in Flax's order (which decides the first error JAX raises).

Pure functions of the input's and the parameters' types; reading layers from source is
`layers.py`'s job.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardls.core import FLOAT32, DType, PartitionSpec
from shardls.core.typing import (
    ShapeError,
    ShardedType,
    astype,
    binary,
    broadcast_to,
    dot,
    dot_general,
    einsum,
    full_like,
    reduce,
    reshape,
    scalar,
    take,
    transpose,
    unary,
)
from shardls.core.typing.errors import VALUE_ERROR
from shardls.core.typing.promotion import is_inexact, is_integer, result_type
from shardls.core.typing.results import out_sharding as typed_out_sharding


def _canonical_dtype(arrays: Sequence[ShardedType | None], dtype: DType | None, inexact: bool) -> DType:
    """`nnx.nn.dtypes.canonicalize_dtype`: `dtype`, else the arrays' common type (a floating one
    when `inexact`)."""
    if dtype is None:
        dtype, _ = result_type(*((a.dtype, a.weak_type) for a in arrays if a is not None))
        if inexact and not is_inexact(dtype):
            dtype, _ = result_type((FLOAT32, False), (dtype, False))
    if inexact and not is_inexact(dtype):
        raise ShapeError(f"Dtype must be inexact: {dtype.name}", VALUE_ERROR)
    return dtype


def _promoted(
    arrays: Sequence[ShardedType | None], dtype: DType | None, inexact: bool = True
) -> list[ShardedType | None]:
    """`nnx.nn.dtypes.promote_dtype`: each array cast to the canonical dtype."""
    common = _canonical_dtype(arrays, dtype, inexact)
    return [None if a is None else astype(a, common) for a in arrays]


def linear(
    x: ShardedType,
    kernel: ShardedType,
    bias: ShardedType | None,
    dtype: DType | None,
    out_sharding: PartitionSpec | None,
) -> ShardedType:
    """`nnx.Linear.__call__`: `dot_general` over x's last dimension and the kernel's first, then
    the bias reshaped to `(1, ..., 1, -1)` added."""
    x_, kernel_, bias_ = _promoted((x, kernel, bias), dtype)
    assert x_ is not None and kernel_ is not None
    y = dot_general(x_, kernel_, (((x_.rank - 1,), (0,)), ((), ())), out_sharding=out_sharding)
    if bias_ is None:
        return y
    return binary("add", y, reshape(bias_, (1,) * (y.rank - 1) + (-1,)))


def linear_general(
    x: ShardedType,
    kernel: ShardedType,
    bias: ShardedType | None,
    axis: tuple[int, ...],
    dtype: DType | None,
    out_sharding: PartitionSpec | None,
) -> ShardedType:
    """`nnx.LinearGeneral.__call__` (no `batch_axis`): `dot_general` of x's `axis` with the
    kernel's leading dimensions, then the bias reshaped to `(1, ..., *out_features)` added."""
    contracted = tuple(sorted(a if a >= 0 else x.rank + a for a in axis))
    if kernel.rank <= len(contracted):  # no output features: Flax's initializers refuse the kernel
        raise ShapeError("LinearGeneral without out_features is not modelled", VALUE_ERROR)
    x_, kernel_, bias_ = _promoted((x, kernel, bias), dtype)
    assert x_ is not None and kernel_ is not None
    numbers = ((contracted, tuple(range(len(contracted)))), ((), ()))
    y = dot_general(x_, kernel_, numbers, out_sharding=out_sharding)
    if bias_ is None:
        return y
    out_features = kernel_.shape[len(contracted) :]
    return binary("add", y, reshape(bias_, (1,) * (x_.rank - len(contracted)) + out_features))


def einsum_layer(
    x: ShardedType,
    kernel: ShardedType,
    bias: ShardedType | None,
    equation: str,
    dtype: DType | None,
    out_sharding: PartitionSpec | None,
) -> ShardedType:
    """`nnx.Einsum.__call__` (an explicit equation without `...`): `jnp.einsum` of x and the
    kernel, then the bias reshaped to the result's rank (its kernel dimensions, 1 elsewhere)."""
    if "->" not in equation or equation.count(",") != 1 or "." in equation:
        raise ShapeError(f"einsum equation {equation!r} is not modelled", VALUE_ERROR)
    operands, result = equation.split("->")
    rhs = operands.split(",")[1]
    if len(rhs) != kernel.rank or len(set(rhs)) != len(rhs):
        raise ShapeError(f"einsum equation {equation!r} does not fit the kernel", VALUE_ERROR)
    x_, kernel_, bias_ = _promoted((x, kernel, bias), dtype)
    assert x_ is not None and kernel_ is not None
    y = einsum(equation, x_, kernel_, out_sharding=out_sharding)
    if bias_ is None:
        return y
    shape = tuple(kernel.shape[rhs.index(c)] if c in rhs else 1 for c in result)
    return binary("add", y, reshape(bias_, shape))


def embed(
    ids: ShardedType,
    table: ShardedType,
    dtype: DType | None,
    out_sharding: PartitionSpec | None,
) -> ShardedType:
    """`nnx.Embed.__call__`: a `take` along the table's rows (with `out_sharding=`, Flax runs the
    take under `auto_axes` and the result has that sharding)."""
    if not is_integer(ids.dtype):
        raise ShapeError("Input type must be an integer or unsigned integer.", VALUE_ERROR)
    (promoted,) = _promoted((table,), dtype, inexact=False)
    assert promoted is not None
    num_embeddings, features = promoted.shape
    if num_embeddings == 1:
        return broadcast_to(promoted, ids.shape + (features,))
    if out_sharding is not None:
        shape = ids.shape + (features,)
        return typed_out_sharding(ids.mesh, out_sharding, shape, promoted.dtype)
    return take(promoted, ids, axis=0)


def attend(
    query: ShardedType, table: ShardedType, dtype: DType | None, out_sharding: PartitionSpec | None
) -> ShardedType:
    """`nnx.Embed.attend`: `jnp.dot(query, embedding.T)`."""
    query_, table_ = _promoted((query, table), dtype)
    assert query_ is not None and table_ is not None
    return dot(query_, transpose(table_), out_sharding=out_sharding)


def normalized(
    x: ShardedType, scale: ShardedType | None, bias: ShardedType | None, dtype: DType | None, use_mean: bool
) -> ShardedType:
    """`nnx.LayerNorm.__call__` (`use_mean`) and `nnx.RMSNorm.__call__` over the last axis:
    `promote_dtype`, `_compute_stats` (fast variance), then `_normalize`."""
    x_, scale, bias = _promoted((x, scale, bias), dtype)
    assert x_ is not None
    mean, var = _statistics(x_, dtype, use_mean)
    stats_shape = (*x_.shape[:-1], 1)
    feature_shape = (1,) * (x_.rank - 1) + x_.shape[-1:]
    y = binary("subtract", x_, reshape(mean, stats_shape))
    mul = unary("sqrt", binary("add", reshape(var, stats_shape), scalar(x_, FLOAT32)))  # lax.rsqrt
    if scale is not None:
        scale = reshape(scale, feature_shape)
        mul = binary("multiply", mul, scale)
    y = binary("multiply", y, mul)
    if bias is not None:
        bias = reshape(bias, feature_shape)
        y = binary("add", y, bias)
    return astype(y, _canonical_dtype((x_, scale, bias), dtype, inexact=True))


def _statistics(x: ShardedType, dtype: DType | None, use_mean: bool) -> tuple[ShardedType, ShardedType]:
    """`_compute_stats` over the last axis, in its order (which decides the first error)."""
    stats, _ = result_type((dtype or x.dtype, False), (FLOAT32, False))
    x = astype(x, stats)
    squared = unary("square", x)
    if not use_mean:
        var = reduce("mean", squared, -1)
        return full_like(var), var
    mean = reduce("mean", x, -1)
    mean_of_squares = reduce("mean", squared, -1)
    difference = binary("subtract", mean_of_squares, unary("square", mean))
    return mean, binary("maximum", scalar(x, FLOAT32), difference)
