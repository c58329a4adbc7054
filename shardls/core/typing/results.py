"""What every operation's result goes through in JAX, after its own sharding rule.

`call_shape_dtype_sharding_rule` turns a result spec that names a mesh axis twice into
"... produces an illegally sharded result", and `core.get_sharding` rejects a result whose
dimensions its axes do not divide (a ValueError). `out_sharding=` arguments pass
`canonicalize_sharding` first, which is the layout calculator's RESHARD context.
"""

from __future__ import annotations

from collections.abc import Sequence

from shardls.core.context import UsageContext
from shardls.core.dtypes import DType
from shardls.core.layout import compute_layout
from shardls.core.mesh import Mesh
from shardls.core.spec import PartitionSpec
from shardls.core.typing.errors import (
    DUPLICATE_SPEC_ERROR,
    SHARDING_TYPE_ERROR,
    VALUE_ERROR,
    TypeRejected,
    reject,
)
from shardls.core.typing.types import ShardedType, SpecAxes, axes_size, explicit_spec, format_type

CORE_CODE_ERRORS = {
    "SH001": VALUE_ERROR,
    "SH002": VALUE_ERROR,
    "SH004": DUPLICATE_SPEC_ERROR,
    "SH005": VALUE_ERROR,
    "SH008": VALUE_ERROR,
    "SH009": VALUE_ERROR,
    "SH010": VALUE_ERROR,
    "SH011": VALUE_ERROR,
}
"""The class JAX raises for each layout problem a sharding argument can have."""


def short(t: ShardedType) -> str:
    """`aval.str_short(short_dtypes=True)`: `f32[8@X,16]`, as JAX's messages print operands."""
    return format_type(short_dtype(t.dtype), t.shape, t.spec, t.mesh, t.unreduced, t.reduced)


def short_dtype(dtype: DType) -> str:
    name = dtype.name
    for long, abbreviation in (
        ("bfloat", "bf"),
        ("float", "f"),
        ("uint", "u"),
        ("int", "i"),
        ("complex", "c"),
    ):
        if name.startswith(long):
            return abbreviation + name[len(long) :]
    return name


def result(
    name: str,
    inputs: Sequence[ShardedType],
    shape: tuple[int, ...],
    dtype: DType,
    spec: SpecAxes,
    *,
    unreduced: frozenset[str] = frozenset(),
    reduced: frozenset[str] = frozenset(),
    weak_type: bool = False,
) -> ShardedType:
    """The checked result of primitive `name` on `inputs` (whose first element gives the mesh)."""
    check_legal(name, inputs, shape, dtype, spec)
    check_divisible(inputs[0].mesh, shape, spec)
    return ShardedType(shape, dtype, inputs[0].mesh, spec, unreduced, reduced, weak_type)


def check_legal(
    name: str, inputs: Sequence[ShardedType], shape: tuple[int, ...], dtype: DType, spec: SpecAxes
) -> None:
    """A result spec naming an axis twice: JAX finds it when the sharding rule builds the result's
    NamedSharding, before any unreduced rule runs."""
    mesh = inputs[0].mesh
    flat = [a for axes in spec for a in axes]
    if len(flat) != len(set(flat)):
        wanted = format_type(short_dtype(dtype), shape, spec, mesh)
        operands = ", ".join(short(t) for t in inputs)
        raise reject(
            "SH303",
            f"{name} operation with inputs: {operands} produces an illegally sharded result: {wanted}",
            SHARDING_TYPE_ERROR,
            result=wanted,
        )


def check_divisible(mesh: Mesh, shape: tuple[int, ...], spec: SpecAxes) -> None:
    for dim, (n, axes) in enumerate(zip(shape, spec, strict=True)):
        size = axes_size(mesh, axes)
        if axes and n % size:
            raise reject(
                "SH310",
                f"Sharding spec {axes!r} implies that array axis {dim} is partitioned {size} times, "
                f"but does not evenly divide the dimension size {n}. Got shape: {shape}",
                VALUE_ERROR,
                dim=dim,
                size=n,
                factor=size,
            )


def out_sharding(mesh: Mesh, spec: PartitionSpec, shape: tuple[int, ...], dtype: DType) -> ShardedType:
    """The type an `out_sharding=`/`reshard` spec gives a result of `shape`, or why JAX rejects it.

    The spec is padded to the rank first (`_normalized_spec_for_aval`), as every caller does."""
    if len(spec.entries) > len(shape) and all(e is None for e in spec.entries[len(shape) :]):
        # `_make_lengths_same` drops extra entries that shard nothing.
        spec = PartitionSpec(spec.entries[: len(shape)], spec.unreduced, spec.reduced, spec.original)
    layout = compute_layout(mesh, spec, shape, dtype, UsageContext.RESHARD)
    errors = [p for p in layout.problems if p.is_error]
    if errors:
        first = errors[0]
        data = {"jax_error": CORE_CODE_ERRORS.get(first.code, VALUE_ERROR), **first.data}
        raise TypeRejected(type(first)(first.code, first.severity, first.message, data))
    return ShardedType(
        shape, dtype, mesh, explicit_spec(mesh, spec, len(shape)), spec.unreduced, spec.reduced, False
    )


def check_sharding(mesh: Mesh, spec: PartitionSpec, dtype: DType) -> None:
    """`canonicalize_sharding` of a spec before any shape is known (`x.at[...].get` checks its
    `out_sharding=` up front): names, axis types and duplicates, never divisibility."""
    out_sharding(mesh, spec, (0,) * len(spec.entries), dtype)
