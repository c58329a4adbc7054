"""`lax.slice` and `lax.dynamic_slice`: the operand's sharding, as `_slice_sharding_rule` and
`_dynamic_slice_sharding_rule` give it, as long as every sharded dimension whose size changes
stays divisible by its mesh axes (JAX has no uneven shards of a result yet). `lax.split` shares
the rule."""

from __future__ import annotations

from collections.abc import Sequence

from shardls.core.typing.elementwise import not_implemented_for_unreduced
from shardls.core.typing.errors import SHARDING_TYPE_ERROR, ShapeError, reject
from shardls.core.typing.results import result, short
from shardls.core.typing.types import ShardedType, axes_size


def check_varying_shape(x: ShardedType, shape: tuple[int, ...], name: str) -> None:
    """`_get_sharding_for_varying_out_shape`: a sharded dimension whose size changes must stay
    divisible by its mesh axes (JAX does not support uneven shards of a result yet)."""
    for n, out, axes in zip(x.shape, shape, x.spec, strict=True):
        if n != out and axes and out % axes_size(x.mesh, axes):
            size = axes_size(x.mesh, axes)
            spec_text = axes[0] if len(axes) == 1 else "(" + ", ".join(f"'{a}'" for a in axes) + ")"
            raise reject(
                "SH308",
                f"{name} on sharded dims where out dim ({out}) is not divisible by mesh axes ({size}) "
                f"with spec ({spec_text}) is not implemented. Got input type={short(x)} and output "
                f"shape={shape}",
                SHARDING_TYPE_ERROR,
                operation=name,
                size=out,
                factor=size,
            )


def lax_slice(
    x: ShardedType, start: Sequence[int], limit: Sequence[int], strides: Sequence[int] | None = None
) -> ShardedType:
    """`lax.slice(x, start, limit, strides)`: the operand's sharding (unreduced/reduced kept), if
    every sharded dimension whose size changes stays divisible."""
    rank = x.rank
    for name, values in (("start_indices", start), ("limit_indices", limit)):
        if len(values) != rank:
            raise ShapeError(
                f"slice {name} must have length equal to the number of dimensions of the operand, got "
                f"indices {tuple(values)} for operand shape {x.shape}."
            )
    if strides is not None and len(strides) != rank:
        raise ShapeError(
            f"slice strides must have length equal to the number of dimensions of the operand, got "
            f"strides {tuple(strides)} for operand shape {x.shape}."
        )
    if any(b > n for b, n in zip(limit, x.shape, strict=True)):
        raise ShapeError(
            f"slice limit_indices must be less than or equal to operand shape, got limit_indices "
            f"{tuple(limit)} for operand shape {x.shape}."
        )
    if any(a < 0 for a in start):
        raise ShapeError(
            f"slice start_indices must be greater than or equal to zero, got start_indices {tuple(start)}."
        )
    if any(b < a for a, b in zip(start, limit, strict=True)):
        raise ShapeError(
            f"slice limit_indices must be greater than or equal to start_indices, got start_indices "
            f"{tuple(start)} and limit_indices {tuple(limit)}."
        )
    steps = strides or [1] * rank
    if any(s <= 0 for s in steps):
        raise ShapeError(f"slice strides must be positive, got {tuple(steps)}")
    shape = tuple(-(-(b - a) // s) for a, b, s in zip(start, limit, steps, strict=True))
    check_varying_shape(x, shape, "slicing")
    return result(
        "slice", [x], shape, x.dtype, x.spec, unreduced=x.unreduced, reduced=x.reduced, weak_type=x.weak_type
    )


def dynamic_slice(x: ShardedType, slice_sizes: Sequence[int]) -> ShardedType:
    """`lax.dynamic_slice(x, starts, slice_sizes)` (the starts do not change the type): the
    operand's sharding, if every sharded dimension whose size changes stays divisible."""
    if len(slice_sizes) != x.rank:
        raise ShapeError(
            f"dynamic_slice slice_sizes must have the same length as the operand rank, got slice_sizes "
            f"{tuple(slice_sizes)} for operand shape {x.shape}"
        )
    if any(s > n for s, n in zip(slice_sizes, x.shape, strict=True)):
        raise ShapeError(
            f"slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
            f"{tuple(slice_sizes)} for operand shape {x.shape}."
        )
    if any(s < 0 for s in slice_sizes):
        raise ShapeError(
            f"slice slice_sizes must be greater than or equal to zero, got slice_sizes of {tuple(slice_sizes)}."
        )
    shape = tuple(slice_sizes)
    check_varying_shape(x, shape, "dynamic_slice")
    not_implemented_for_unreduced("dynamic_slice", x, reduced_too=False)
    return result("dynamic_slice", [x], shape, x.dtype, x.spec, reduced=x.reduced, weak_type=x.weak_type)
