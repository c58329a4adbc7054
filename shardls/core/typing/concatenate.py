"""Joining arrays: `jnp.concatenate`/`jnp.concat`, `lax.concatenate`, `jnp.stack`/`lax.stack`.

`_concatenate_sharding_rule` and `_stack_sharding_rule` ask every operand for the same sharding
(the spec with its unreduced and reduced axes), and the result keeps it, so concatenating along
a sharded dimension is fine; `stack` inserts its new dimension unsharded. jnp promotes dtypes
first, and `axis=None` flattens every operand (a reshape, which merges sharded dimensions).
"""

from __future__ import annotations

from collections.abc import Sequence

from shardls.core.mesh import Mesh
from shardls.core.typing.elementwise import promote_dtypes
from shardls.core.typing.errors import SHARDING_TYPE_ERROR, VALUE_ERROR, ShapeError, reject
from shardls.core.typing.reshape import reshape
from shardls.core.typing.results import result
from shardls.core.typing.types import ShardedType, SpecAxes


def _mesh_text(mesh: Mesh) -> str:
    """`AbstractMesh.__repr__`: `AbstractMesh('X': 2, 'Y': 4, axis_types=(Explicit, Explicit))`."""
    sizes = ", ".join(f"'{n}': {s}" for n, s in zip(mesh.axis_names, mesh.axis_sizes, strict=True))
    types = tuple(t.value for t in mesh.axis_types)
    kinds = "(" + ", ".join(types) + ("," if len(types) == 1 else "") + ")"
    return f"AbstractMesh({sizes}, axis_types={kinds})"


def _spec_text(spec: SpecAxes, unreduced: frozenset[str], reduced: frozenset[str]) -> str:
    """`PartitionSpec.__repr__`: `P('X', None)`, `P(None,)`, `P(None, unreduced={'X'})`."""
    partitions = tuple(None if not axes else axes[0] if len(axes) == 1 else axes for axes in spec)
    text = repr(partitions)[1:-1]
    marks = [
        f"{name}={set(axes)!r}" for name, axes in (("unreduced", unreduced), ("reduced", reduced)) if axes
    ]
    if not marks:
        return f"P({text})"
    lead = "" if not text else f"{text} " if text.endswith(",") else f"{text}, "
    return f"P({lead}{', '.join(marks)})"


def sharding_text(t: ShardedType) -> str:
    """`str(NamedSharding)` of an operand's type, as JAX's messages print it."""
    return f"NamedSharding(mesh={_mesh_text(t.mesh)}, spec={_spec_text(t.spec, t.unreduced, t.reduced)})"


def same_sharding(operands: Sequence[ShardedType]) -> None:
    """The rule `concatenate` and `stack` share: one sharding for all operands."""
    first = operands[0]
    if any(
        (t.spec, t.unreduced, t.reduced) != (first.spec, first.unreduced, first.reduced) for t in operands
    ):
        raise reject(
            "SH307",
            "All operands should have the same sharding. Got shardings "
            + ", ".join(sharding_text(t) for t in operands),
            SHARDING_TYPE_ERROR,
            specs=[_spec_text(t.spec, t.unreduced, t.reduced) for t in operands],
        )


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} is out of bounds for array of dimension {rank}", VALUE_ERROR)
    return axis % rank


def lax_concatenate(operands: Sequence[ShardedType], dimension: int) -> ShardedType:
    """`lax.concatenate(operands, dimension)`: JAX's shape rule, then the same-sharding rule."""
    if not operands:
        raise ShapeError("concatenate expects at least one operand, got 0.")
    shapes = ", ".join(str(t.shape) for t in operands)
    if len({t.rank for t in operands}) != 1:
        raise ShapeError(f"Cannot concatenate arrays with different numbers of dimensions: got {shapes}.")
    first = operands[0]
    if not 0 <= dimension < first.rank:
        raise ShapeError(f"concatenate dimension out of bounds: dimension {dimension} for shapes {shapes}.")
    others = {t.shape[:dimension] + t.shape[dimension + 1 :] for t in operands}
    if len(others) != 1:
        raise ShapeError(
            "Cannot concatenate arrays with shapes that differ in dimensions other than the one being "
            f"concatenated: concatenating along dimension {dimension} for shapes {shapes}."
        )
    if len({t.dtype for t in operands}) != 1:
        raise ShapeError(
            "Cannot concatenate arrays with different dtypes: "
            + ", ".join(t.dtype.name for t in operands)
            + "."
        )
    same_sharding(operands)
    total = sum(t.shape[dimension] for t in operands)
    shape = first.shape[:dimension] + (total,) + first.shape[dimension + 1 :]
    return result(
        "concatenate",
        operands,
        shape,
        first.dtype,
        first.spec,
        unreduced=first.unreduced,
        reduced=first.reduced,
        weak_type=all(t.weak_type for t in operands),
    )


def concatenate(operands: Sequence[ShardedType], axis: int | None = 0) -> ShardedType:
    """`jnp.concatenate(operands, axis)` (and `jnp.concat`): dtypes promoted; `axis=None`
    flattens each operand first."""
    if not operands:
        raise ShapeError("Need at least one array to concatenate.", VALUE_ERROR)
    if axis is None:
        return concatenate([reshape(t, (t.size,)) for t in operands], 0)
    if operands[0].rank == 0:
        raise ShapeError("Zero-dimensional arrays cannot be concatenated.", VALUE_ERROR)
    dimension = _axis(axis, operands[0].rank)
    return lax_concatenate(promote_dtypes(operands), dimension)


def stack(operands: Sequence[ShardedType], axis: int = 0) -> ShardedType:
    """`jnp.stack(operands, axis)` / `lax.stack`: one new unsharded dimension at `axis`."""
    if not operands:
        raise ShapeError("Need at least one array to stack.", VALUE_ERROR)
    promoted = promote_dtypes(operands)
    first = promoted[0]
    dimension = _axis(axis, first.rank + 1)
    if len({t.rank for t in promoted}) != 1:
        raise ShapeError(
            "Cannot stack arrays with different numbers of dimensions: got "
            + ", ".join(str(t.shape) for t in promoted)
            + ".",
            VALUE_ERROR,
        )
    if len({t.shape for t in promoted}) != 1:
        raise ShapeError(
            "All input arrays must have the same shape. Got "
            + ", ".join(str(t.shape) for t in promoted)
            + ".",
            VALUE_ERROR,
        )
    same_sharding(promoted)
    shape = first.shape[:dimension] + (len(promoted),) + first.shape[dimension:]
    spec = first.spec[:dimension] + ((),) + first.spec[dimension:]
    return result(
        "stack",
        promoted,
        shape,
        first.dtype,
        spec,
        unreduced=first.unreduced,
        reduced=first.reduced,
        weak_type=all(t.weak_type for t in promoted),
    )
