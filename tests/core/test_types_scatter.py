"""Indexed updates, `take`/`take_along_axis`, sorts and boolean masks in the sharding-in-types
core.

Each case is a JAX 0.10 behaviour recorded by running JAX (mesh X=2, Y=4, Explicit, 8 fake CPU
devices): the exact type JAX printed, or the code and exception class of its refusal. The
random programs of test_types_differential.py draw these operations too.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from shardls.core import AxisType, Mesh, PartitionSpec, parse_dtype
from shardls.core.typing import (
    ShapeError,
    ShardedType,
    TypeRejected,
    argsort,
    index,
    scatter,
    sort,
    take,
    take_along_axis,
    top_k,
)
from shardls.core.typing.boolean_mask import DATA_DEPENDENT

MESH = Mesh(("X", "Y"), (2, 4), (AxisType.EXPLICIT, AxisType.EXPLICIT))
F32 = parse_dtype("float32")
I32 = parse_dtype("int32")
BOOL = parse_dtype("bool")
X = ShardedType((8, 16), F32, MESH, (("X",), ("Y",)))
B = ShardedType((8, 16), F32, MESH, ((), ("Y",)))
IDS = ShardedType((4,), I32, MESH, ((),))
IDS_X = ShardedType((4,), I32, MESH, (("X",),))
ONE = ShardedType((), F32, MESH, (), weak_type=True)


def _rejected(call: Callable[[], object]) -> tuple[str, object]:
    with pytest.raises(TypeRejected) as info:
        call()
    return info.value.problem.code, info.value.problem.data["jax_error"]


def test_an_update_keeps_the_sharding_of_dimensions_it_takes_whole_or_that_are_unsharded() -> None:
    assert scatter(B, 0, ONE).jax_type == "float32[8,16@Y]"
    assert scatter(B, slice(0, 3), ONE).jax_type == "float32[8,16@Y]"
    assert scatter(B, IDS, ShardedType((4, 16), F32, MESH, ((), ("Y",)))).jax_type == "float32[8,16@Y]"
    assert scatter(X, (slice(None), slice(None)), ONE).jax_type == "float32[8@X,16@Y]"


def test_an_update_into_part_of_a_sharded_dimension_needs_out_sharding() -> None:
    assert _rejected(lambda: scatter(X, 0, ONE)) == ("SH313", "ShardingTypeError")
    assert _rejected(lambda: scatter(B, (slice(None), 0), ONE)) == ("SH313", "ShardingTypeError")
    assert _rejected(lambda: scatter(X, slice(0, 4), ONE)) == ("SH313", "ShardingTypeError")
    assert _rejected(lambda: scatter(B, IDS_X, ONE)) == ("SH313", "ShardingTypeError")
    with pytest.raises(TypeRejected) as info:
        scatter(X, 0, ONE)
    assert info.value.problem.message.endswith(
        "Got operand=ShapedArray(float32[8@X,16@Y]), indices=ShapedArray(int32[1]), "
        "updates=ShapedArray(float32[16@Y])"
    )


def test_values_are_laid_out_like_the_selection_before_the_scatter() -> None:
    # The selection `x[0:3]` keeps `X` on a size it does not divide: a ValueError, not SH313.
    assert _rejected(lambda: scatter(X, slice(0, 3), ONE)) == ("SH310", "ValueError")
    # Values sharded unlike the selection do not broadcast to it.
    with pytest.raises(ShapeError) as info:
        scatter(B, 0, ShardedType((16,), F32, MESH, (("X",),)))
    assert info.value.jax_error == "ValueError"


def test_out_sharding_lays_the_update_out_as_given() -> None:
    assert scatter(X, 0, ONE, out_sharding=PartitionSpec.of("X", None)).jax_type == "float32[8@X,16]"
    assert _rejected(lambda: scatter(X, 0, ONE, out_sharding=PartitionSpec.of("X", "X"))) == (
        "SH004",
        "DuplicateSpecError",
    )


def test_take_is_jaxs_own_gather() -> None:
    assert take(B, IDS, 0).jax_type == "float32[4,16@Y]"
    assert _rejected(lambda: take(B, IDS, 1)) == ("SH308", "ShardingTypeError")
    # No expected slice sharding is built first: a sharded index is the gather's own refusal.
    assert _rejected(lambda: take(X.with_spec(((), ("X",))), IDS_X, 0)) == ("SH308", "ShardingTypeError")


def test_take_along_axis_batches_the_other_dimensions() -> None:
    indices = ShardedType((8, 3), I32, MESH, ((), ()))
    assert take_along_axis(B, ShardedType((3, 16), I32, MESH, ((), ())), 0).jax_type == "float32[3,16@Y]"
    assert take_along_axis(X.with_spec((("X",), ())), indices, 1).jax_type == "float32[8@X,3]"
    assert _rejected(lambda: take_along_axis(B, indices, 1)) == ("SH308", "ShardingTypeError")
    with pytest.raises(ShapeError) as info:
        take_along_axis(B, ShardedType((8, 3), F32, MESH, ((), ())), 1)
    assert info.value.jax_error == "TypeError"


def test_sorting_needs_the_sorted_axis_unsharded() -> None:
    assert sort(B, 0).jax_type == "float32[8,16@Y]"
    assert argsort(B, 0).jax_type == "int32[8,16@Y]"
    assert _rejected(lambda: sort(B, 1)) == ("SH314", "ShardingTypeError")
    assert _rejected(lambda: argsort(B, None)) == ("SH305", "ShardingTypeError")  # the flattening
    assert _rejected(lambda: top_k(B, 3)) == ("SH314", "ShardingTypeError")
    values, indices = top_k(X.with_spec((("X",), ())), 4)
    assert (values.jax_type, indices.jax_type) == ("float32[8@X,4]", "int32[8@X,4]")


def test_a_traced_boolean_mask_is_an_error_and_an_eager_one_has_no_type() -> None:
    mask = ShardedType((8, 16), BOOL, MESH, (("X",), ("Y",)))
    assert _rejected(lambda: index(X, mask)) == ("SH315", "NonConcreteBooleanIndexError")
    assert _rejected(lambda: scatter(X, mask, ONE)) == ("SH315", "NonConcreteBooleanIndexError")
    for concrete_read in (
        lambda: index(X, mask, concrete=True),
        lambda: scatter(X, mask, ONE, concrete=True),
    ):
        with pytest.raises(ShapeError) as info:
            concrete_read()
        assert info.value.jax_error == DATA_DEPENDENT


def test_an_eager_masked_update_of_a_scalar_keeps_the_type_where_the_count_does_not_matter() -> None:
    rows = ShardedType((8,), BOOL, MESH, ((),))
    mask = ShardedType((8, 16), BOOL, MESH, (("X",), ("Y",)))
    assert scatter(B, rows, ONE, concrete=True).jax_type == "float32[8,16@Y]"
    spec = PartitionSpec.of("X", "Y")
    assert scatter(X, mask, ONE, concrete=True, out_sharding=spec).jax_type == "float32[8@X,16@Y]"
    # Refused unless the mask is all False: only the data decide, so no type and no error.
    for data_dependent in (
        lambda: scatter(X, mask, ONE, concrete=True),
        lambda: scatter(B, rows, ShardedType((16,), F32, MESH, ((),)), concrete=True),
    ):
        with pytest.raises(ShapeError) as info:
            data_dependent()
        assert info.value.jax_error == DATA_DEPENDENT
