"""`reshape` (`jnp.reshape`, `x.reshape`, `ravel`, `lax.reshape`), mirroring
`_reshape_sharding_rule`.

JAX infers the result's sharding only when the reshape adds or removes size-1 dimensions, or
splits exactly one dimension, or merges exactly one group of dimensions; a split or merge must
move whole mesh axes (a sharded dimension of 8 over an axis of 4, split into (2, 4), cannot keep
the axis). Anything else needs `out_sharding=`. An unsharded array reshapes freely.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from shardls.core.spec import PartitionSpec
from shardls.core.typing.errors import VALUE_ERROR, ShapeError, TypeRejected, reject
from shardls.core.typing.results import out_sharding as typed_out_sharding
from shardls.core.typing.results import result, short
from shardls.core.typing.types import DimAxes, ShardedType, SpecAxes

_Split = list[int | list[int]]
TYPE = "TypeError"


class _Explicit(Exception):
    """JAX's ReshapeExplicitError: more than one dimension would change."""


def resolve_shape(x: ShardedType, shape: Sequence[int]) -> tuple[int, ...]:
    """`jnp.reshape`'s `-1`: the one size that keeps the element count."""
    sizes = list(shape)
    total = math.prod(x.shape)
    if sizes.count(-1) > 1:
        raise ShapeError("can only specify one unknown dimension", VALUE_ERROR)
    if -1 in sizes:
        rest = math.prod(n for n in sizes if n != -1)
        if rest == 0 or total % rest:
            raise ShapeError(
                f"cannot reshape array of shape {x.shape} (size {total}) into shape {tuple(shape)}", TYPE
            )
        sizes[sizes.index(-1)] = total // rest
    if math.prod(sizes) != total or any(n < 0 for n in sizes):
        raise ShapeError(
            f"cannot reshape array of shape {x.shape} (size {total}) into shape {tuple(shape)}", TYPE
        )
    return tuple(sizes)


def reshape(
    x: ShardedType, shape: Sequence[int], *, out_sharding: PartitionSpec | None = None
) -> ShardedType:
    new = resolve_shape(x, shape)
    if new == x.shape and out_sharding is None:
        return x
    if out_sharding is not None:
        typed = typed_out_sharding(x.mesh, out_sharding, new, x.dtype)
        for kind, have, want in (
            ("unreduced", x.unreduced, typed.unreduced),
            ("reduced", x.reduced, typed.reduced),
        ):
            if have and have != want:
                raise reject(
                    "SH311",
                    f"out_sharding passed to reshape must be {kind} over the same mesh axes as operand. "
                    f"Got out_sharding: {typed.partition_spec.canonical()} and operand type: {short(x)}",
                    VALUE_ERROR,
                )
            if want and not have:
                raise reject(
                    "SH311",
                    f"out_sharding passed to `reshape` cannot contain {kind} axes. Got {typed.partition_spec.canonical()}",
                    VALUE_ERROR,
                )
        return result(
            "reshape",
            [x],
            new,
            x.dtype,
            typed.spec,
            unreduced=x.unreduced,
            reduced=x.reduced,
            weak_type=x.weak_type,
        )
    spec = _infer(x, new)
    return result(
        "reshape", [x], new, x.dtype, spec, unreduced=x.unreduced, reduced=x.reduced, weak_type=x.weak_type
    )


def _unsupported(x: ShardedType, new: tuple[int, ...], jax_error: str = "ShardingTypeError") -> TypeRejected:
    return reject(
        "SH305",
        "This reshape is not supported. Please specify the sharding of the output via the `out_sharding` "
        f"argument of jax.lax.reshape. Got operand type: {x.jax_type}, new sizes: {new}",
        jax_error,
        new_sizes=list(new),
    )


def _infer(x: ShardedType, new: tuple[int, ...]) -> SpecAxes:
    if not any(x.spec):
        return ((),) * len(new)
    if [n for n in x.shape if n != 1] == [n for n in new if n != 1]:
        kept = iter(a for n, a in zip(x.shape, x.spec, strict=True) if n != 1)
        return tuple(() if n == 1 else next(kept) for n in new)
    try:
        split = _split_on_one_axis(list(x.shape), list(new))
        if split is not None:
            return _split_an_axis(x, split, new)
        merge = _split_on_one_axis(list(new), list(x.shape)) if len(new) < x.rank else None
        if merge is not None:
            return _merge_an_axis(x, merge, new)
    except _Explicit:
        raise _unsupported(x, new) from None
    except IndexError:
        raise _unsupported(x, new, "IndexError") from None
    except AssertionError:
        raise _unsupported(x, new, "AssertionError") from None
    raise _unsupported(x, new)


def _split_on_one_axis(op_shape: list[int], new_sizes: list[int]) -> _Split | None:
    """JAX's `_split_on_one_axis`, step for step (including where it gives up): per operand
    dimension, its size, or the list of new sizes it splits into; None when it is no single split."""
    if len(new_sizes) <= len(op_shape):
        return None
    original_rank = len(op_shape)
    ones = 0
    while op_shape[-1] == 1 and new_sizes[-1] == 1:
        ones += 1
        op_shape, new_sizes = op_shape[:-1], new_sizes[:-1]
    i = j = count = 0
    out: _Split = []
    while j < len(new_sizes):
        if op_shape[i] == new_sizes[j]:
            out.append(op_shape[i])
        else:
            count += 1
            if count > 1:
                raise _Explicit
            group = [new_sizes[j]]
            next_j, next_i = j + 1, i + 1
            while math.prod(group) != op_shape[i] or (next_j < len(new_sizes) and new_sizes[next_j] == 1):
                if math.prod(group) > op_shape[i]:
                    return None
                if (
                    math.prod(group) == op_shape[i]
                    and next_i < len(op_shape)
                    and new_sizes[next_j] == op_shape[next_i]
                ):
                    break
                j += 1
                if j >= len(new_sizes):
                    return None
                group.append(new_sizes[j])
                next_j += 1
            out.append(group)
        i += 1
        j += 1
    out.extend([1] * ones)
    assert len(out) == original_rank
    return out


def _split_partitions(x: ShardedType, axes: DimAxes, sizes: list[int], new: tuple[int, ...]) -> list[DimAxes]:
    """Hand the axes, most significant first, to the new dimensions that they divide."""
    remaining = iter(axes)
    out: list[DimAxes] = []
    for size in sizes:
        taken: list[str] = []
        while size > 1:
            axis = next(remaining, None)
            if axis is None:
                break
            size, rest = divmod(size, x.mesh.sizes_by_name[axis])
            if rest:
                raise _unsupported(x, new)
            taken.append(axis)
        out.append(tuple(taken))
    assert next(remaining, None) is None
    return out


def _split_an_axis(x: ShardedType, split: _Split, new: tuple[int, ...]) -> SpecAxes:
    spec: list[DimAxes] = []
    for part, axes in zip(split, x.spec, strict=True):
        if isinstance(part, list):
            spec.extend([()] * len(part) if not axes else _split_partitions(x, axes, part, new))
        else:
            spec.append(axes)
    return tuple(spec)


def _merge_an_axis(x: ShardedType, merge: _Split, new: tuple[int, ...]) -> SpecAxes:
    spec: list[DimAxes] = []
    entries = iter(x.spec)
    for size, part in zip(new, merge, strict=True):
        if isinstance(part, list):
            group = [next(entries) for _ in part]
            if not any(group):
                spec.append(())
                continue
            while not group[-1]:
                group.pop()
            if any(not axes for axes in group):
                raise _unsupported(x, new)
            spec.extend(_split_partitions(x, tuple(a for axes in group for a in axes), [size], new))
        else:
            spec.append(next(entries))
    return tuple(spec)
