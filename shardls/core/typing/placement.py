"""Operations that set the sharding in the type: `jax.sharding.reshard`, `astype`, and the
`*_like` constructors.

`reshard` replaces the type's sharding with the spec (padded to the rank), after
`canonicalize_sharding` checked it (Explicit axes only, no duplicates, dividing every dimension).
`zeros_like` and friends keep the operand's sharding unless `out_sharding=` says otherwise.
"""

from __future__ import annotations

from shardls.core.dtypes import DType
from shardls.core.spec import PartitionSpec
from shardls.core.typing.elementwise import convert
from shardls.core.typing.results import out_sharding as typed_out_sharding
from shardls.core.typing.types import ShardedType


def reshard(x: ShardedType, spec: PartitionSpec) -> ShardedType:
    """`jax.sharding.reshard(x, spec)`: the new type, or TypeRejected with the spec's problem."""
    typed = typed_out_sharding(x.mesh, spec, x.shape, x.dtype)
    return ShardedType(x.shape, x.dtype, x.mesh, typed.spec, typed.unreduced, typed.reduced, x.weak_type)


def astype(x: ShardedType, dtype: DType) -> ShardedType:
    """`x.astype(dtype)`: a convert_element_type, which keeps the sharding and unreduced axes."""
    return convert(x, dtype)


def full_like(
    x: ShardedType, dtype: DType | None = None, *, out_sharding: PartitionSpec | None = None
) -> ShardedType:
    """`jnp.zeros_like`/`ones_like`/`full_like`/`empty_like`: the operand's shape and sharding
    (never its unreduced axes: the result holds whole values)."""
    if out_sharding is not None:
        return typed_out_sharding(x.mesh, out_sharding, x.shape, dtype or x.dtype)
    if dtype is None:
        return ShardedType(x.shape, x.dtype, x.mesh, x.spec, weak_type=x.weak_type)
    return ShardedType(x.shape, dtype, x.mesh, x.spec)
